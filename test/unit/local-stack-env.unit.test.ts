import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadStackConfig, localStackEnv } from '../../tools/local-stack/stack-config';

// The local stack, not the library, knows where its services are and what its logins' passwords
// are: it supplies them as the environment the library reads.
describe('the local stack supplies the environment', () => {
  let dir: string;
  const passwords = { LOCAL_PG_PASSWORD: 'pw-owner-1', LOCAL_PG_RELAY_PASSWORD: 'pw-relay-1', LOCAL_PG_CONSUMER_PASSWORD: 'pw-consumer-1', LOCAL_PG_RETENTION_PASSWORD: 'pw-retention-1' };
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-stack-env-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('names its services wherever the environment names none, and marks them as its own', () => {
    const env = localStackEnv({ OUTBOX_CACHE_DIR: dir, ...passwords });
    assert.equal(env.DATABASE_URL, 'postgres://outbox:pw-owner-1@127.0.0.1:54329/outbox');
    assert.equal(env.KAFKA_BROKERS, '127.0.0.1:19092');
    assert.equal(env.TEMPORAL_ADDRESS, '127.0.0.1:7233');
    assert.equal(env.TEMPORAL_UI_URL, 'http://127.0.0.1:8233');
    assert.equal(env.OUTBOX_LOCAL_STACK, 'postgres,kafka,temporal');
    assert.equal(env.RELAY_DATABASE_URL, undefined, 'no worker logins unless asked: a test pointing DATABASE_URL elsewhere must not inherit them');
    const workers = localStackEnv({ OUTBOX_CACHE_DIR: dir, ...passwords }, { workerLogins: true });
    assert.equal(workers.RELAY_DATABASE_URL, 'postgres://outbox_relay_worker:pw-relay-1@127.0.0.1:54329/outbox');
  });

  it('leaves a service the environment names alone, and a child process still knows which are local', () => {
    const env = localStackEnv({ OUTBOX_CACHE_DIR: dir, ...passwords, DATABASE_URL: 'postgres://u:p@db/x' });
    assert.equal(env.DATABASE_URL, 'postgres://u:p@db/x');
    assert.equal(env.OUTBOX_LOCAL_STACK, 'kafka,temporal');
    const child = loadStackConfig({ ...env, DATABASE_URL: 'postgres://u:p@127.0.0.1:54329/scratch' });
    assert.deepEqual([child.database.local, child.kafka.local, child.temporal.local], [false, true, true]);
  });

  it('generates a missing password once, into its own cache folder, when it is first needed', () => {
    const first = localStackEnv({ OUTBOX_CACHE_DIR: dir });
    const generated = fs.readFileSync(path.join(dir, 'postgres', 'credentials', 'outbox'), 'utf8').trim();
    assert.ok(first.DATABASE_URL?.includes(`:${generated}@`));
    assert.equal(localStackEnv({ OUTBOX_CACHE_DIR: dir }).DATABASE_URL, first.DATABASE_URL, 'the same password the second time');
  });
});
