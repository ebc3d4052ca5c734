import assert from 'node:assert/strict';
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import { HEADERS } from '../../src/kafka/message-format';
import type { RelayStatus } from '../../workflows/relay/status';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// Relay scale-out with no configuration change: 8 shards, then 1, 2 and 3 relay worker processes
// started with the same environment, then one of them killed with SIGKILL. Which worker runs
// which shard is read from the shards' own `status` query (the worker of their relay session).
const SHARDS = 8;
/** The bound docs/relay.md states for a shard to move after a worker joins, leaves or dies. */
const MOVE_BOUND_MS = 60_000;
const KEYS = 64;
// A worker process bundles its workflows before it polls: seconds normally, minutes on a machine
// shared with other test runs. The bound above is counted from the moment it polls.
const STARTUP_MS = 240_000;

describe('relay shards spread over the relay workers that are running, and come back when one is killed or stopped', function () {
  this.timeout(900_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  const workers: RelayProcess[] = [];
  let load: { stop(): Promise<number> } | undefined;

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    topic = await createTestTopic(6);
  });
  after(async () => {
    await load?.stop();
    await terminateStartedShards();
    for (const w of workers) await w.kill9();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  /** A steady trickle over KEYS keys (≈ 250 events/s), so every shard keeps relaying. */
  function startLoad() {
    let seq = 0;
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const from = seq + 1;
        seq += 50;
        await db.pool.query(
          `INSERT INTO temporal_outbox.outbox_events (event_type, payload, event_key)
           SELECT 'payment_confirmed', jsonb_build_object('event_id', 'spread-' || g, 'type', 'payment_confirmed', 'account_id', g % ${KEYS}, 'amount', 1, 'seq', g), 'acct-' || (g % ${KEYS})
             FROM generate_series($1::int, $2::int) g`,
          [from, seq],
        );
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    return {
      async stop() {
        stopped = true;
        await loop;
        return seq;
      },
    };
  }

  it('with N workers no worker holds more than ⌈8/N⌉+1 shards, every worker holds some, within the stated bound', async () => {
    const taskQueue = uniqueName('relay-spread-tq');
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue };
    const handles: WorkflowHandle[] = [];
    const first = new RelayProcess(env);
    workers.push(first);
    await first.waitUntilRunning(STARTUP_MS);
    for (let i = 0; i < SHARDS; i++) handles.push(await startShard(temporal.client, taskQueue, { shardIndex: i, shardCount: SHARDS, batchSize: 200 }));
    load = startLoad();

    /** Shard count per worker process (by pid), from each shard's status; undefined until every shard names a worker. */
    const holdings = async () => {
      const statuses = await Promise.all(handles.map((h) => h.query<RelayStatus>('status')));
      if (statuses.some((s) => !s.worker)) return undefined;
      const byPid = new Map<number, number>();
      for (const s of statuses) {
        const pid = Number(/-(\d+)-[0-9a-f]+$/.exec(s.worker!)?.[1]);
        byPid.set(pid, (byPid.get(pid) ?? 0) + 1);
      }
      return byPid;
    };
    const spreadOver = async (alive: RelayProcess[], label: string) => {
      const started = Date.now();
      let last: Map<number, number> | undefined;
      const bound = Math.ceil(SHARDS / alive.length) + 1;
      await eventually(
        `${label}: shards on exactly the ${alive.length} live workers, none over ${bound} (last seen ${JSON.stringify([...(last ?? [])])})`,
        async () => {
          last = await holdings();
          if (!last) return false;
          const pids = alive.map((w) => w.child.pid!);
          return [...last.keys()].every((pid) => pids.includes(pid)) && pids.every((pid) => (last!.get(pid) ?? 0) > 0) && Math.max(...last.values()) <= bound;
        },
        MOVE_BOUND_MS,
        500,
      );
      return { ms: Date.now() - started, holdings: Object.fromEntries(last!) };
    };

    const one = await spreadOver([first], '1 worker');

    const second = new RelayProcess(env);
    workers.push(second);
    await second.waitUntilRunning(STARTUP_MS);
    const two = await spreadOver([first, second], '2 workers');

    const third = new RelayProcess(env);
    workers.push(third);
    await third.waitUntilRunning(STARTUP_MS);
    const three = await spreadOver([first, second, third], '3 workers');

    await second.kill9();
    const afterKill = await spreadOver([first, third], 'second worker killed');

    // A clean stop (SIGTERM, as an orchestrator scales down): the worker leaves the live set at once.
    await third.stop();
    const afterStop = await spreadOver([first], 'third worker stopped');

    process.stdout.write(`      shard placement (shards per worker pid) and time to reach it: ${JSON.stringify({ one, two, three, afterKill, afterStop })}\n`);

    // Nothing lost and each key's first deliveries in order, through every move.
    const total = await load.stop();
    load = undefined;
    await eventually(
      'every event published',
      async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n) === 0,
      120_000,
      500,
    );
    const messages = await readWholeTopic(topic.topic, 120_000);
    assert.equal(new Set(messages.map((m) => m.headers[HEADERS.eventId])).size, total, 'no event lost');
    for (let k = 0; k < KEYS; k++) {
      const seen = new Set<number>();
      const firstSeen = messages
        .filter((m) => m.key === `acct-${k}`)
        .map((m) => JSON.parse(m.value).seq as number)
        .filter((s) => (seen.has(s) ? false : (seen.add(s), true)));
      assert.deepEqual(firstSeen, [...firstSeen].sort((a, b) => a - b), `key acct-${k}: first deliveries out of order`);
    }
  });
});
