import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { loadConfig, PROJECT_ROOT } from '../../src/config/env';
import { LOCAL_PG_WORKER_LOGINS } from '../../tools/local-stack/local-credentials';
import { cachePaths } from '../../tools/local-stack/paths';
import { stopPostgres } from '../../tools/local-stack/postgres';
import { LOCAL_STACK_VARIABLES, loadStackConfig, type StackConfig } from '../../tools/local-stack/stack-config';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { testTemporalClient } from '../kit/temporal';

// The README's main command, run as written and stopped as a terminal stops it: Ctrl-C sends
// SIGINT to the whole foreground process group, the demo's workers included. It brings up the
// stack, starts the workers, relay shards and retention schedule, sends demo payments, and after
// Ctrl-C exits 0 only if every confirmed payment ended up credited exactly once.
// It runs on topics, consumer group, task queues, relay workflow ids and schedules of its own,
// so it neither sees nor leaves behind anything of a real `npm start` on this stack; and on a
// PostgreSQL of its own that the demo provisions as it would on a fresh machine (a new cluster
// with password authentication, passwords given in the environment), so the run also shows each
// worker logging in under its own role and no password in any log of the run.
describe('npm start (the README\'s main command)', function () {
  this.timeout(400_000);
  let topic: { topic: string; remove(): Promise<void> };
  let deadLetter: { topic: string; remove(): Promise<void> };
  let env: Record<string, string>;

  let cacheDir: string;
  let pgConfig: StackConfig;
  const passwords = Object.fromEntries(
    ['LOCAL_PG_PASSWORD', 'LOCAL_PG_RELAY_PASSWORD', 'LOCAL_PG_CONSUMER_PASSWORD', 'LOCAL_PG_RETENTION_PASSWORD'].map((v) => [v, crypto.randomBytes(15).toString('base64url')]),
  );

  before(async () => {
    topic = await createTestTopic(3);
    deadLetter = await createTestTopic(1);
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-demo-'));
    fs.chmodSync(cacheDir, 0o755); // the PostgreSQL service account must reach its data folder
    const shared = loadConfig();
    env = {
      // Its own PostgreSQL, provisioned by the demo; the shared Kafka and Temporal.
      OUTBOX_CACHE_DIR: cacheDir,
      LOCAL_PG_PORT: String(22_000 + Math.floor(Math.random() * 2000) * 4),
      KAFKA_BROKERS: shared.kafka.brokers.join(','),
      TEMPORAL_ADDRESS: shared.temporal.address,
      TEMPORAL_UI_URL: shared.temporal.uiUrl,
      ...passwords,
      KAFKA_TOPIC: topic.topic,
      KAFKA_DEAD_LETTER_TOPIC: deadLetter.topic,
      KAFKA_PARTITIONS: '3',
      CONSUMER_GROUP: uniqueName('demo-group'),
      RELAY_TASK_QUEUE: uniqueName('demo-relay'),
      CONSUMER_TASK_QUEUE: uniqueName('demo-credit'),
      RETENTION_TASK_QUEUE: uniqueName('demo-retention'),
      RETENTION_SCHEDULE_ID: uniqueName('demo-retention-schedule'),
      AUDIT_SCHEDULE_ID: uniqueName('demo-audit-schedule'),
      // Runs within the demo's 20 s, so the retention worker's role does real work too.
      RETENTION_INTERVAL: '5s',
      AUDIT_INTERVAL: '5s',
      RELAY_WORKFLOW_ID_PREFIX: uniqueName('demo-relay-shard'),
    };
    // The demo's own stack as the demo sees it: its PostgreSQL (and logins) in its cache folder.
    pgConfig = loadStackConfig({ ...withoutDatabaseUrl(process.env), ...env });
  });
  after(async () => {
    const { client, connection } = await testTemporalClient();
    for (let i = 0; i < pgConfig.relay.shards; i++) await client.workflow.getHandle(pgConfig.relay.workflowId(i)).terminate('test finished').catch(() => undefined);
    await client.schedule.getHandle(env.RETENTION_SCHEDULE_ID!).delete().catch(() => undefined);
    await client.schedule.getHandle(env.AUDIT_SCHEDULE_ID!).delete().catch(() => undefined);
    await connection.close();
    await topic?.remove();
    await deadLetter?.remove();
    if (cacheDir) {
      await stopPostgres(cachePaths(cacheDir)).catch(() => undefined);
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('runs the whole pipeline live and every confirmed payment is credited exactly once, account by account', async () => {
    // --keep-stack: its PostgreSQL stays up for the checks below (stopped in `after`).
    // A process group of its own, as a terminal gives the job it runs in the foreground.
    const child = spawn('npm', ['start', '--', '--rate', '100', '--keep-stack'], { cwd: PROJECT_ROOT, env: { ...withoutDatabaseUrl(process.env), ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // npm itself exits at once on Ctrl-C (by the signal) while the demo goes on draining, as in a
    // terminal; the demo is done when its output closes.
    const npmExited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    const exited = new Promise<void>((resolve) => child.stdout.on('close', resolve));
    let pressedCtrlC = false;
    // Ctrl-C 20 s into the traffic, to the whole group: at 100 payments/s some are always on their
    // way through the relay and the consumer at that moment, and only workers that are still
    // running can credit them.
    const ctrlC = (async () => {
      while (!/confirming \d+ payments\/s until Ctrl-C/.test(output) && child.exitCode === null) await new Promise((r) => setTimeout(r, 200));
      await new Promise((r) => setTimeout(r, 20_000));
      if (child.exitCode === null) {
        process.kill(-child.pid!, 'SIGINT');
        pressedCtrlC = true;
      }
    })();
    // Who is logged in, sampled while the demo runs: each worker under its own login.
    const seenUsers = new Set<string>();
    let running = true;
    void exited.then(() => (running = false));
    while (running) {
      await sessionUsers(pgConfig).then((users) => users.forEach((u) => seenUsers.add(u))).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
    }
    await exited;
    await ctrlC;
    const npm = await npmExited;
    assert.ok(pressedCtrlC, `the demo ended before Ctrl-C:\n${output}`);
    assert.ok(npm.code === 0 || npm.signal === 'SIGINT', `npm start exited with ${npm.code ?? npm.signal}:\n${output}`);
    assert.doesNotMatch(output, /NOT drained/, output);
    assert.match(output, /PostgreSQL starting on 127\.0\.0\.1/, 'the demo provisioned its PostgreSQL');
    assert.match(output, new RegExp(`Temporal UI: ${loadConfig().temporal.uiUrl.replace(/[.]/g, '\\.')}`));
    assert.match(output, /relay-worker started .*\n.*consumer-worker started .*\n.*retention-worker started/);
    assert.match(output, new RegExp(`retention schedule ${env.RETENTION_SCHEDULE_ID}: (created|updated)`));
    const sent = Number(/traffic stopped after (\d+) payments/.exec(output)?.[1]);
    assert.ok(sent > 0, 'demo traffic flowed');
    assert.match(output, /all \d+ confirmed payments are credited exactly once: each of \d+ accounts' balance equals its confirmed payments; balances total (\d+) = confirmed total \1/);

    // Checked here too, from the database itself: each account holds exactly its own payments.
    const pg = new PgClient({ connectionString: pgConfig.database.url });
    await pg.connect();
    const { rows } = await pg.query(
      `SELECT p.account_id, p.confirmed::bigint, coalesce(a.balance, 0)::bigint AS balance, p.n::int
         FROM (SELECT account_id, sum(amount) AS confirmed, count(*) AS n FROM payments WHERE status = 'confirmed' GROUP BY account_id) p
         LEFT JOIN accounts a USING (account_id)
        ORDER BY 1`,
    );
    assert.ok(rows.length > 1, 'payments spread over several accounts');
    assert.equal(rows.reduce((n, r) => n + r.n, 0), sent, 'every payment the demo sent is confirmed');
    for (const r of rows) assert.equal(r.balance, r.confirmed, `account ${r.account_id}: balance equals its ${r.n} confirmed payments`);
    await pg.end();

    // The demo stopped its workers (they run in process groups of their own, out of Ctrl-C's reach).
    const workerPids = [...output.matchAll(/-worker started \(pid (\d+),/g)].map((m) => Number(m[1]));
    assert.equal(workerPids.length, 3);
    for (const pid of workerPids) assert.throws(() => process.kill(pid, 0), /ESRCH/, `worker ${pid} still running after the demo ended`);

    // Least privilege in practice: the three workers logged in as their own users.
    for (const { user } of Object.values(LOCAL_PG_WORKER_LOGINS)) assert.ok(seenUsers.has(user), `${user} logged in during the demo (seen: ${[...seenUsers].join(', ')})`);
    // No password in the demo's output, the workers' logs or the stack's logs of this run.
    const logs = [output, ...filesUnder(path.join(cacheDir, 'logs')).map((f) => fs.readFileSync(f, 'utf8'))];
    assert.ok(filesUnder(path.join(cacheDir, 'logs', 'workers')).length === 3, 'the three workers\' logs were read');
    for (const [variable, password] of Object.entries(passwords)) assert.ok(!logs.some((text) => text.includes(password)), `the ${variable} password appears in a log`);
  });
});

/** The test run's environment without its own stack's services (the demo provisions its PostgreSQL; Kafka and Temporal are given). */
function withoutDatabaseUrl(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const key of LOCAL_STACK_VARIABLES) delete copy[key];
  return copy;
}

async function sessionUsers(config: StackConfig): Promise<string[]> {
  const pg = new PgClient({ connectionString: config.database.url, connectionTimeoutMillis: 2000 });
  await pg.connect();
  try {
    return (await pg.query<{ usename: string }>(`SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = 'outbox' AND usename IS NOT NULL`)).rows.map((r) => r.usename);
  } finally {
    await pg.end();
  }
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
