import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { seedScene } from '../kit/seed-scene-rows';
import { loadConfig, PROJECT_ROOT } from '../../src/config/env';
import type { DoctorReport } from '../../src/doctor/run-doctor';
import { runDoctor } from '../../src/doctor/run-doctor';
import { databaseTimeAgo } from '../../src/retention/database-clock';
import { planOutboxWalk } from '../../src/retention/plan-outbox-walk';
import { ensureRetentionSchedule } from '../../src/retention/schedule';
import { sweepPublishedOutbox } from '../../src/retention/sweep-published-outbox';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { testTemporalClient } from '../kit/temporal';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);
const DAY = 86_400_000;

function check(report: DoctorReport, name: string) {
  const found = report.checks.find((c) => c.check === name);
  assert.ok(found, `check ${name} ran`);
  return found;
}

/** The doctor as a user runs it: the CLI, its exit code and its output. */
async function doctorCli(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [...nodeScript('src/cli/main.ts'), 'doctor', ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

describe('doctor', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  let scheduleId: string;
  let env: NodeJS.ProcessEnv;
  let topic: { topic: string; remove(): Promise<void> };
  before(async () => {
    db = await createTestDatabase();
    // A topic and group of its own: the default ones carry whatever `npm start` left behind.
    topic = await createTestTopic(1);
    scheduleId = uniqueName('retention-schedule');
    env = {
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic.topic,
      CONSUMER_GROUP: uniqueName('doctor-group'),
      RETENTION_SCHEDULE_ID: scheduleId,
      RETENTION_TASK_QUEUE: uniqueName('retention'),
      RETENTION_WINDOW_MS: String(DAY),
    };
  });
  after(async () => {
    const { client, connection } = await testTemporalClient();
    await client.schedule.getHandle(scheduleId).delete().catch(() => undefined);
    await connection.close();
    await topic?.remove();
    await db?.drop();
  });

  it('fails on a missing retention schedule and names the command that creates it', async () => {
    const report = await runDoctor(loadConfig({ ...process.env, ...env }));
    const schedule = check(report, 'retention-schedule');
    assert.equal(schedule.status, 'fail');
    assert.match(schedule.problems[0]!.fix, /npx temporal-outbox retention schedule/);
    assert.equal(report.healthy, false);
  });

  it('is healthy on a small outbox with its index and schedule', async () => {
    const config = loadConfig({ ...process.env, ...env });
    const { client, connection } = await testTemporalClient();
    try {
      await ensureRetentionSchedule(client, config);
      await client.schedule.getHandle(scheduleId).pause('doctor test: no worker runs it');
    } finally {
      await connection.close();
    }
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) SELECT 'payment_confirmed', jsonb_build_object('event_id', 'e' || g) FROM generate_series(1, 20) g`);
    const report = await runDoctor(config);
    assert.equal(report.healthy, true, JSON.stringify(report.checks.filter((c) => c.status === 'fail'), null, 2));
    const poll = check(report, 'poll-plan');
    assert.equal(poll.facts.find((f) => f.label === 'uses outbox_events_pending_idx')?.value, true);
    const outbox = check(report, 'outbox-table');
    assert.equal(outbox.facts.find((f) => f.label === 'pending')?.value, 20);
    // Paused and no worker are warnings with their fixes, not failures.
    const schedule = check(report, 'retention-schedule');
    assert.equal(schedule.status, 'warn');
    assert.ok(schedule.problems.some((p) => /--unpause/.test(p.fix)));
  });

  it('flags an outbox far larger than the window implies, and is satisfied once retention ran', async () => {
    await db.pool.query(`DELETE FROM temporal_outbox.outbox_events`);
    await seedScene(db.pool, { rows: 200_000, perDay: 50_000, pending: 10, parked: 5 });
    await db.pool.query('ANALYZE temporal_outbox.outbox_events');
    const config = loadConfig({ ...process.env, ...env });
    let outbox = check(await runDoctor(config), 'outbox-table');
    assert.equal(outbox.status, 'fail');
    assert.ok(outbox.problems.some((p) => /older than twice the retention window/.test(p.message) && /retention schedule/.test(p.fix)));

    const cutoff = await databaseTimeAgo(db.pool, DAY);
    const walk = await planOutboxWalk(db.pool, cutoff);
    await sweepPublishedOutbox(db.pool, { cutoff, fromId: walk.fromId!, untilId: walk.untilId!, batchSize: 10_000, deadline: Date.now() + 60_000 });
    outbox = check(await runDoctor(config), 'outbox-table');
    assert.ok(!outbox.problems.some((p) => /older than twice/.test(p.message)), JSON.stringify(outbox.problems));
  });

  it('exits non-zero without the partial index and prints the CREATE INDEX statement (CLI, text and --json)', async () => {
    await db.pool.query('DROP INDEX temporal_outbox.outbox_events_pending_idx');
    const text = await doctorCli(env);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /fix: CREATE INDEX CONCURRENTLY outbox_events_pending_idx ON temporal_outbox.outbox_events \(id\) WHERE published_at IS NULL AND parked_at IS NULL;/);
    assert.match(text.stdout, /does not use outbox_events_pending_idx/);

    const json = await doctorCli(env, ['--json']);
    assert.equal(json.code, 1);
    const report = JSON.parse(json.stdout) as DoctorReport;
    assert.equal(report.healthy, false);
    assert.equal(check(report, 'pending-index').status, 'fail');
    assert.equal(check(report, 'poll-plan').facts.find((f) => f.label === 'uses outbox_events_pending_idx')?.value, false);

    // The fix it names works: run it, and the doctor is satisfied again.
    await db.pool.query(check(report, 'pending-index').problems[0]!.fix);
    await db.pool.query('ANALYZE temporal_outbox.outbox_events');
    const after = await runDoctor(loadConfig({ ...process.env, ...env }));
    assert.equal(check(after, 'pending-index').status, 'ok');
    assert.equal(check(after, 'poll-plan').facts.find((f) => f.label === 'uses outbox_events_pending_idx')?.value, true);
  });
});
