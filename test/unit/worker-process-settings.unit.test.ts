import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/env';
import { summariseRss, type RssSample } from '../kit/process-memory';
import { workerEntry, type WorkerName } from '../../workers/entries';
import { exampleConsumerEntry } from '../../examples/payments/worker-entries';
import { WORKER_ENV, WORKER_NODE_ARGS } from '../../workers/node-args';

// The memory figures (bench:memory-soak) hold for workers started with workers/node-args.ts's
// flags and environment: every way this project starts a worker must use exactly those.

const KINDS: WorkerName[] = ['relay', 'consumer', 'retention'];
const envPrefix = Object.entries(WORKER_ENV).map(([k, v]) => `${k}=${v}`).join(' ');

describe('worker process settings', () => {
  it('npm run worker:* starts each worker with its flags and environment', () => {
    const scripts = (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const kind of KINDS) {
      // On the local stack's services: tools/local-stack/local-worker.ts applies them, then runs the worker.
      assert.equal(scripts[`worker:${kind}`], `${envPrefix} node ${WORKER_NODE_ARGS[kind].join(' ')} --import tsx tools/local-stack/local-worker.ts ${kind}`, kind);
    }
  });

  it('docker-compose gives the app containers the workers’ environment', () => {
    const compose = parse(fs.readFileSync(path.join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8')) as { 'x-app': { environment: Record<string, string> } };
    for (const [key, value] of Object.entries(WORKER_ENV)) assert.equal(String(compose['x-app'].environment[key]), value, key);
  });

  it('workerEntry (the demo, package users) carries the flags and the environment', () => {
    for (const kind of KINDS) {
      const entry = kind === 'consumer' ? exampleConsumerEntry() : workerEntry(kind);
      assert.deepEqual(entry.nodeArgs.slice(0, WORKER_NODE_ARGS[kind].length), [...WORKER_NODE_ARGS[kind]]);
      assert.deepEqual(entry.env, WORKER_ENV);
    }
  });
});

describe('memory soak summary', () => {
  const sample = (seconds: number, rssMiB: number, hwmMiB = rssMiB): RssSample => ({ worker: 'relay', seconds, rssKiB: rssMiB * 1024, hwmKiB: hwmMiB * 1024 });

  it('takes the peak from VmHWM (between samples), the level from the last third, and shows drift', () => {
    const samples = [sample(0, 100), sample(100, 150), sample(200, 180, 260), sample(250, 200), sample(300, 210), sample(400, 190)];
    const s = summariseRss('relay', samples, 300);
    assert.equal(s.peakKiB, 260 * 1024);
    assert.equal(s.maxSampledKiB, 210 * 1024);
    // Last third of 300 s: samples at 200, 250, 300 (the drain after 300 s is not part of it).
    assert.equal(s.levelledKiB, 200 * 1024);
    assert.deepEqual(s.lastThirdKiB, [180 * 1024, 210 * 1024]);
    assert.deepEqual(s.firstThirdKiB, [100 * 1024, 100 * 1024]);
  });

  it('refuses a worker with no samples instead of reporting zero', () => {
    assert.throws(() => summariseRss('consumer', [], 60), /no memory samples of the consumer worker/);
  });
});
