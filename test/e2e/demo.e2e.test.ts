import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { loadConfig, PROJECT_ROOT } from '../../config/env';
import { createTestDatabase, type TestDatabase } from '../../testkit/database';
import { uniqueName } from '../../testkit/ids';
import { createTestTopic } from '../../testkit/kafka';
import { testTemporalClient } from '../../testkit/temporal';

// The README's main command, run as written (with a duration so it ends by itself): it brings up
// the stack, starts the workers, relay shards and retention schedule, sends demo payments, and
// exits 0 only if every confirmed payment ended up credited exactly once.
// It runs on a database, topics, consumer group, task queues, relay workflow ids and schedule of
// its own, so it neither sees nor leaves behind anything of a real `npm start` on this stack.
describe('npm start (the README\'s main command)', function () {
  this.timeout(400_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let deadLetter: { topic: string; remove(): Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    deadLetter = await createTestTopic(1);
    env = {
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic.topic,
      KAFKA_DEAD_LETTER_TOPIC: deadLetter.topic,
      KAFKA_PARTITIONS: '3',
      CONSUMER_GROUP: uniqueName('demo-group'),
      RELAY_TASK_QUEUE: uniqueName('demo-relay'),
      CONSUMER_TASK_QUEUE: uniqueName('demo-credit'),
      RETENTION_TASK_QUEUE: uniqueName('demo-retention'),
      RETENTION_SCHEDULE_ID: uniqueName('demo-retention-schedule'),
      RELAY_WORKFLOW_ID_PREFIX: uniqueName('demo-relay-shard'),
    };
  });
  after(async () => {
    const { client, connection } = await testTemporalClient();
    const config = loadConfig({ ...process.env, ...env });
    for (let i = 0; i < config.relay.shards; i++) await client.workflow.getHandle(config.relay.workflowId(i)).terminate('test finished').catch(() => undefined);
    await client.schedule.getHandle(env.RETENTION_SCHEDULE_ID!).delete().catch(() => undefined);
    await connection.close();
    await topic?.remove();
    await deadLetter?.remove();
    await db?.drop();
  });

  it('runs the whole pipeline live and every confirmed payment is credited exactly once, account by account', async () => {
    const child = spawn('npm', ['start', '--', '--duration', '20', '--rate', '30'], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, output);
    assert.match(output, new RegExp(`Temporal UI: ${loadConfig().temporal.uiUrl.replace(/[.]/g, '\\.')}`));
    assert.match(output, /relay-worker started .*\n.*consumer-worker started .*\n.*retention-worker started/);
    assert.match(output, new RegExp(`retention schedule ${env.RETENTION_SCHEDULE_ID}: (created|updated)`));
    const sent = Number(/traffic stopped after (\d+) payments/.exec(output)?.[1]);
    assert.ok(sent > 0, 'demo traffic flowed');
    assert.match(output, /all \d+ confirmed payments are credited exactly once: each of \d+ accounts' balance equals its confirmed payments; balances total (\d+) = confirmed total \1/);

    // Checked here too, from the database itself: each account holds exactly its own payments.
    const { rows } = await db.pool.query(
      `SELECT p.account_id, p.confirmed::bigint, coalesce(a.balance, 0)::bigint AS balance, p.n::int
         FROM (SELECT account_id, sum(amount) AS confirmed, count(*) AS n FROM payments WHERE status = 'confirmed' GROUP BY account_id) p
         LEFT JOIN accounts a USING (account_id)
        ORDER BY 1`,
    );
    assert.ok(rows.length > 1, 'payments spread over several accounts');
    assert.equal(rows.reduce((n, r) => n + r.n, 0), sent, 'every payment the demo sent is confirmed');
    for (const r of rows) assert.equal(r.balance, r.confirmed, `account ${r.account_id}: balance equals its ${r.n} confirmed payments`);
  });
});
