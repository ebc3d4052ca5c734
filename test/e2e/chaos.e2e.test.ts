import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../../app/child-processes';
import { setUp } from '../../app/setup';
import { waitForPollers } from '../../app/wait-for-workers';
import { TASK_QUEUES } from '../../config/constants';
import { createPool } from '../../db/pool';
import { ensureKafka, stopKafka } from '../../infra/kafka';
import { cachePaths } from '../../infra/paths';
import { ensurePostgres, stopPostgres } from '../../infra/postgres';
import { stackDown, stackUp } from '../../infra/stack';
import { ensureTemporal, stopTemporal } from '../../infra/temporal';
import { startRelays } from '../../outbox/relay-control';
import { childEnv, isolatedStack } from '../support/isolated-stack';
import { eventually } from '../support/wait';

// The BRIEF's promise, tested by breaking things: while events are being committed, restart
// PostgreSQL, Kafka and the Temporal server, and kill -9 the relay and the consumer worker.
// Afterwards every committed outbox row is published and credited exactly once. This runs on a
// stack of its own (own ports and data) so restarting services disturbs nothing else.
describe('chaos: restarts of every service and kill -9 of every worker while events flow', function () {
  this.timeout(600_000);
  const stack = isolatedStack({ linkKafkaJars: true, extraEnv: { RELAY_BATCH_SIZE: '200' } });
  const { config } = stack;
  const paths = cachePaths(stack.dir);
  const logDir = path.join(stack.dir, 'logs', 'workers');
  const env = childEnv(stack);
  const workers = new Map<string, ChildWorker>();
  const pool = createPool(config.database.url, { max: 4, connectionTimeoutMillis: 2000 });
  const say = (m: string) => process.stdout.write(`      [chaos] ${m}\n`);
  const ACCOUNTS = Array.from({ length: 10 }, (_, i) => 500 + i);

  /** Starts a worker and, like a process supervisor, starts it again whenever it exits. */
  function supervise(name: string, entry: string) {
    const start = () => {
      const w = startChildWorker(name, entry, logDir, env);
      workers.set(name, w);
      w.process.once('exit', (code, signal) => {
        if (workers.get(name) !== w || stopping) return;
        say(`${name} exited (${signal ?? code}); supervisor restarts it`);
        setTimeout(start, 500);
      });
    };
    start();
  }
  let stopping = false;

  before(async () => {
    await stackUp(config, () => undefined);
    await setUp(config);
    await pool.query('INSERT INTO accounts (account_id) SELECT unnest($1::bigint[])', [ACCOUNTS]);
    supervise('relay-worker', 'workers/relay.worker.ts');
    supervise('consumer-worker', 'workers/consumer.worker.ts');
    const connection = await Connection.connect({ address: config.temporal.address });
    try {
      const client = new Client({ connection, namespace: config.temporal.namespace });
      await waitForPollers(client, [TASK_QUEUES.relay, TASK_QUEUES.consumer], 180_000);
      await startRelays({ client, db: pool, taskQueue: TASK_QUEUES.relay, batchSize: 200 }, 2);
    } finally {
      await connection.close();
    }
  });

  after(async () => {
    stopping = true;
    await stopChildWorkers([...workers.values()], 5000);
    await pool.end();
    await stackDown(config);
    stack.remove();
  });

  it('publishes and credits every committed event exactly once', async () => {
    let committed = 0;
    let failed = 0;
    let producing = true;
    // A producer that keeps going through outages: a failed insert was not committed and is
    // simply not counted; the outbox table itself is the record of what was committed.
    const producer = (async () => {
      let n = 0;
      while (producing) {
        const accountId = ACCOUNTS[n % ACCOUNTS.length]!;
        const payload = { event_id: `chaos-${n}`, type: 'payment_confirmed', account_id: accountId, amount: 1 + (n % 97) };
        try {
          await pool.query(`INSERT INTO outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [payload]);
          committed++;
        } catch {
          failed++;
          await new Promise((r) => setTimeout(r, 200));
        }
        n++;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const pause = (s: number) => new Promise((r) => setTimeout(r, s * 1000));
    const kill9 = (name: string) => {
      say(`kill -9 ${name}`);
      workers.get(name)?.process.kill('SIGKILL');
    };

    await pause(5);
    say('restarting PostgreSQL');
    await stopPostgres(paths);
    await pause(2);
    await ensurePostgres(config, paths, () => undefined);
    await pause(5);
    say('restarting Kafka');
    await stopKafka(paths);
    await pause(2);
    await ensureKafka(config, paths, () => undefined);
    await pause(5);
    say('restarting the Temporal server');
    await stopTemporal(paths);
    await pause(2);
    await ensureTemporal(config, paths, () => undefined);
    await pause(5);
    kill9('relay-worker');
    await pause(8);
    kill9('consumer-worker');
    await pause(8);
    producing = false;
    await producer;
    say(`producer done: ${committed} inserts acknowledged, ${failed} failed during outages`);

    await eventually('every committed event published', async () => {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL`);
      return rows[0].n === 0;
    }, 300_000, 1000);
    const expected = async () =>
      (await pool.query(`SELECT (payload->>'account_id')::bigint AS account_id, sum((payload->>'amount')::bigint)::bigint AS total
                           FROM outbox_events GROUP BY 1 ORDER BY 1`)).rows.map((r) => [String(r.account_id), String(r.total)]);
    const balances = async () =>
      (await pool.query(`SELECT account_id, balance FROM accounts WHERE balance <> 0 ORDER BY account_id`)).rows.map((r) => [String(r.account_id), String(r.balance)]);
    await eventually('every committed event credited', async () => JSON.stringify(await balances()) === JSON.stringify(await expected()), 300_000, 1000);

    const { rows: [counts] } = await pool.query(`SELECT (SELECT count(*)::int FROM outbox_events) AS outbox,
                                                         (SELECT count(*)::int FROM inbox_processed_events) AS inbox,
                                                         (SELECT count(*)::int FROM inbox_parked_events) AS parked,
                                                         (SELECT count(*)::int FROM outbox_events WHERE parked_at IS NOT NULL) AS outbox_parked`);
    assert.ok(counts.outbox >= committed, 'every acknowledged insert is in the outbox');
    assert.equal(counts.inbox, counts.outbox, 'each event recorded once in the inbox');
    assert.equal(counts.parked, 0);
    assert.equal(counts.outbox_parked, 0);
    assert.deepEqual(await balances(), await expected());
    say(`${counts.outbox} events, each published and credited exactly once`);
  });
});
