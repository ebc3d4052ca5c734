import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig, PROJECT_ROOT } from '../../src/config/env';
import { consumerLagCheck } from '../../src/doctor/checks/consumer-lag';
import type { DoctorReport } from '../../src/doctor/run-doctor';
import { consumerEnv, produceEvents, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';
import { nodeScript } from '../kit/compiled-build';

// Issue 14, point 6: 1.2 million events waited with no consumer running and the doctor said OK,
// because a credit had been applied within CONSUMER_MAX_LAG_MS (1 day). Reproduced small: a
// recent credit in the inbox, events on the topic, a group with no members.

describe('doctor: events wait and no consumer runs', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const group = uniqueName('doctor-absent-group');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
  });
  after(async () => {
    await consumer?.stop('SIGKILL');
    await topic?.remove();
    await db?.drop();
  });

  it('the consumer-lag check fails naming the partitions and the oldest event\'s age; OK once a consumer caught up', async () => {
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, CONSUMER_GROUP: group, DOCTOR_MAX_CONSUMER_WAIT_MS: '2000' };
    const config = loadConfig({ ...process.env, ...env });
    await db.pool.query('INSERT INTO accounts (account_id) VALUES (1), (2), (3)');
    // A credit applied a moment ago: the old rule (nothing applied for a day) sees no problem.
    await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ($1, 'earlier-credit')`, [config.consumer.inboxName]);
    const before = await consumerLagCheck({ db: db.pool, config });
    assert.equal(before.status, 'ok', 'nothing waits yet');

    await produceEvents(testKafka(), topic.topic, Array.from({ length: 9 }, (_, i) => ({ event_id: `absent-${i}`, account_id: 1 + (i % 3), amount: 100 + i })));
    await new Promise((r) => setTimeout(r, 2500));

    // The doctor as an operator runs it.
    const run = await promisify(execFile)(process.execPath, [...nodeScript('src/cli/main.ts'), 'doctor', '--json'], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } }).catch(
      (err: { stdout: string; code: number }) => ({ stdout: err.stdout, code: err.code }),
    );
    assert.equal((run as { code?: number }).code, 1, 'the doctor exits non-zero');
    const report = JSON.parse(run.stdout) as DoctorReport;
    const lag = report.checks.find((c) => c.check === 'consumer-lag')!;
    assert.equal(lag.status, 'fail');
    assert.match(lag.problems[0]!.message, /9 events wait on .* the consumer group .* has no members/);
    assert.match(lag.problems[0]!.message, /partition \d: \d waiting, oldest \d+(\.\d)? s/);
    assert.match(lag.problems[0]!.fix, /npm run worker:consumer/);
    const fact = (label: string) => lag.facts.find((f) => f.label === label)?.value;
    assert.equal(fact('group members'), 0);
    assert.equal(fact('lag (messages)'), 9);
    assert.ok(Number(fact('oldest waiting event')) >= 2000 && Number(fact('oldest waiting event')) < 120_000, `oldest waiting ${fact('oldest waiting event')} ms`);
    const perPartition = [0, 1, 2].map((p) => Number(fact(`partition ${p}`)));
    assert.equal(perPartition.reduce((a, b) => a + b, 0), 9);

    // A consumer runs and catches up: the same check is OK.
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('doctor-absent-credit') }));
    await eventually('all nine credited', async () => Number((await db.pool.query('SELECT sum(balance) AS s FROM accounts')).rows[0].s) === 9 * 100 + 36, 240_000);
    await eventually('the check is OK with the consumer caught up', async () => (await consumerLagCheck({ db: db.pool, config })).status === 'ok', 60_000, 500);
    const ok = await consumerLagCheck({ db: db.pool, config });
    assert.equal(ok.facts.find((f) => f.label === 'group members')?.value, 1);
    assert.equal(ok.facts.find((f) => f.label === 'lag (messages)')?.value, 0);
  });
});
