import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { PROJECT_ROOT } from '../../src/config/env';
import { loadStackConfig } from '../local-stack/stack-config';
import { laneEnv, LANES, testFilesOutsideLanes } from './test-lanes-plan';

// `npm test`'s runner, inside `stack run`: the suite as two mocha processes side by side, the
// end-to-end files in one and the integration and unit files in the other (tools/scripts/
// test-lanes-plan.ts). Most of a test's time is waiting on its services (a session timeout, a
// lease, a broker's election), not the CPU, so two lanes take little more than the longer one.
// Every test names its own database, topic, task queue, namespace and workflow ids, and a test that
// breaks a service breaks one of its own (test/kit/isolated-stack.ts), which is what lets the
// lanes share one stack, as CI's Node 20 core already does beside the suite.
//
//   npm test                           both lanes, each line prefixed by its lane's name
//   npm test -- test/e2e/demo.e2e.test.ts   the given files in one mocha process, as before
//   TEST_LANES=1 npm test              the whole suite in one mocha process
//
// Each lane's output is also kept whole in the cache's logs folder (test-lane-<name>.log), to
// read one lane straight through; MOCHA_TIMINGS_FILE=<x>.json writes <x>.<lane>.json per lane.

const MOCHA = require.resolve('mocha/bin/mocha.js');
const exitCodes: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };

interface RunningLane {
  name: string;
  child: ChildProcess;
  exit: Promise<number>;
}

function startLane(name: string, specs: string[], env: NodeJS.ProcessEnv, logDir: string | undefined, tagWidth: number): RunningLane {
  const args = [MOCHA, process.stdout.isTTY ? '--color' : '--no-color', ...specs];
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tag = logDir ? `${`[${name}]`.padEnd(tagWidth)} ` : '';
  const log = logDir ? fs.createWriteStream(path.join(logDir, `test-lane-${name}.log`)) : undefined;
  const relay = (from: NodeJS.ReadableStream, to: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      const lines = readline.createInterface({ input: from, crlfDelay: Infinity });
      lines.on('line', (line) => {
        to.write(`${tag}${line}\n`);
        log?.write(`${line}\n`);
      });
      lines.on('close', resolve);
    });
  const streams = Promise.all([relay(child.stdout!, process.stdout), relay(child.stderr!, process.stderr)]);
  const exit = new Promise<number>((resolve) => {
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 + os.constants.signals[signal] : 1)));
  }).then(async (code) => {
    await streams;
    await new Promise<void>((resolve) => (log ? log.end(resolve) : resolve()));
    return code;
  });
  return { name, child, exit };
}

async function main() {
  const files = process.argv.slice(2);
  const lanes = files.length > 0 ? [{ name: 'given', specs: files }] : process.env.TEST_LANES === '1' ? [{ name: 'suite', specs: LANES.flatMap((l) => l.specs) }] : LANES;
  if (lanes === LANES) {
    const outside = testFilesOutsideLanes(PROJECT_ROOT);
    if (outside.length > 0) {
      process.stderr.write(`test files in no lane of tools/scripts/test-lanes-plan.ts, so \`npm test\` would skip them: ${outside.join(', ')}\n`);
      process.exit(2);
    }
  }
  const logDir = lanes.length > 1 ? path.join(loadStackConfig().local.cacheDir, 'logs') : undefined;
  if (logDir) fs.mkdirSync(logDir, { recursive: true });
  const tagWidth = Math.max(...lanes.map((l) => l.name.length)) + 2;
  const running = lanes.map((lane, index) => startLane(lane.name, lane.specs, laneEnv(process.env, lane.name, index, lanes.length), logDir, tagWidth));

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      // Each mocha stops its own worker processes on the signal (test/kit/end-children-with-suite.ts).
      for (const lane of running) lane.child.kill(signal);
      // Bounded: a lane that has not stopped 30 s later is killed.
      setTimeout(() => running.forEach((l) => l.child.kill('SIGKILL')), 30_000).unref();
      void Promise.all(running.map((l) => l.exit)).then(() => process.exit(exitCodes[signal]));
    });
  }

  const codes = await Promise.all(running.map((l) => l.exit));
  if (running.length > 1) {
    for (const [i, lane] of running.entries()) {
      process.stdout.write(`lane ${lane.name}: ${codes[i] === 0 ? 'passed' : `failed (mocha exit status ${codes[i]})`}; its whole output: ${path.join(logDir!, `test-lane-${lane.name}.log`)}\n`);
    }
  }
  process.exit(codes.find((c) => c !== 0) ?? 0);
}

void main();
