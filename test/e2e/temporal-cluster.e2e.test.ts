import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { PROJECT_ROOT } from '../../src/config/env';
import { cachePaths } from '../../tools/local-stack/paths';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { ensureTemporalCluster, stopClusterPart, temporalClusterStatus } from '../../tools/local-stack/temporal-cluster';
import { CLUSTER_DATABASES, CLUSTER_HISTORY_SHARDS, clusterHosts } from '../../tools/local-stack/temporal-cluster/layout';
import { serverAnswers } from '../../tools/local-stack/temporal-server';
import { consumerEnv, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { steadyTraffic, tallyFailover, type SteadyTraffic } from '../kit/failover-traffic';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { monitorStalls, type StallMonitor } from '../kit/progress-stalls';
import { RelayProcess } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);
const CONSUMER = 'payments-credit';
/** The longest the relay or the consumer may stand still through one fault of the engine. */
const STALL_BOUND_MS = { killHistory: 120_000, restart: 90_000 };

// Temporal as TEMPORAL_SERVER=cluster runs it (tools/local-stack/temporal-cluster.ts): separate
// processes for two frontends (behind one address), two history hosts, matching and worker, on
// PostgreSQL with SQL visibility. Runs against the stack's own cluster, so only when the stack
// runs one (`TEMPORAL_SERVER=cluster npm run test:node -- 22`, as CI does); skipped on the dev server.
describe('Temporal as a cluster of processes (TEMPORAL_SERVER=cluster)', function () {
  this.timeout(20 * 60_000);
  const config = loadStackConfig();
  const paths = cachePaths(config.local.cacheDir);
  const hosts = clusterHosts(config.local.temporalPort);
  const say = (m: string) => process.stdout.write(`      [cluster] ${m}\n`);

  before(function () {
    if (config.temporal.server !== 'cluster') this.skip();
  });

  /** A query on the cluster's own databases, as the stack's owner login. */
  async function onClusterDatabase<T extends Record<string, unknown>>(database: string, sql: string, params: unknown[] = []): Promise<T[]> {
    const { owner } = config.local.pgLogins();
    const pg = new PgClient({ host: '127.0.0.1', port: config.local.pgPort, user: owner.user, password: owner.password, database });
    await pg.connect();
    try {
      return (await pg.query<T>(sql, params)).rows;
    } finally {
      await pg.end();
    }
  }

  /**
   * Members of the ring by service (Temporal's role numbers: 1 frontend, 2 history, 3 matching,
   * 4 worker), by the membership port each registered; a restarted process registers again on its port.
   */
  async function liveMembers(): Promise<Record<string, number[]>> {
    const rows = await onClusterDatabase<{ role: number; rpc_port: number }>(CLUSTER_DATABASES.main, 'SELECT DISTINCT role, rpc_port FROM cluster_membership WHERE record_expiry > now() ORDER BY rpc_port');
    const names: Record<number, string> = { 1: 'frontend', 2: 'history', 3: 'matching', 4: 'worker' };
    const out: Record<string, number[]> = {};
    for (const r of rows) (out[names[r.role] ?? String(r.role)] ??= []).push(r.rpc_port);
    return out;
  }

  /** Which history host owns each shard: its shard record names the owner's gRPC address. */
  async function shardOwners(): Promise<Map<number, string>> {
    const rows = await onClusterDatabase<{ shard_id: number; data: Buffer }>(CLUSTER_DATABASES.main, 'SELECT shard_id, data FROM shards ORDER BY shard_id');
    const owners = new Map<number, string>();
    for (const r of rows) {
      const owner = hosts.filter((h) => h.service === 'history').find((h) => r.data.includes(Buffer.from(`127.0.0.1:${h.ports.grpc}`)));
      owners.set(r.shard_id, owner?.name ?? 'unknown');
    }
    return owners;
  }

  it('runs each service as its own process, shares 8 history shards between two history hosts, and lists through SQL visibility', async () => {
    const status = await temporalClusterStatus(config, paths);
    const pids = status.parts.map((p) => p.pid);
    assert.ok(pids.every((p) => p !== undefined), `every part runs: ${JSON.stringify(status.parts)}`);
    assert.equal(new Set(pids).size, pids.length, 'each part a process of its own');

    const temporal = await testTemporalClient();
    try {
      const info = await temporal.connection.workflowService.getClusterInfo({});
      assert.equal(info.historyShardCount, CLUSTER_HISTORY_SHARDS);
      assert.match(info.persistenceStore ?? '', /postgres/);
      assert.match(info.visibilityStore ?? '', /postgres/);
    } finally {
      await temporal.connection.close();
    }
    const members = await liveMembers();
    const portsOf = (service: string) => hosts.filter((h) => h.service === service).map((h) => h.ports.membership);
    for (const service of ['frontend', 'history', 'matching', 'worker']) assert.deepEqual(members[service], portsOf(service), `${service} members of the ring`);
    await eventually('both history hosts own shards', async () => new Set((await shardOwners()).values()).size === 2, 60_000, 1000);
    const owners = await shardOwners();
    assert.equal(owners.size, CLUSTER_HISTORY_SHARDS);
    say(`shard owners: ${[...owners].map(([s, h]) => `${s}→${h}`).join(' ')}`);
  });

  describe('faults of the engine while traffic flows', () => {
    let db: TestDatabase;
    let topic: { topic: string; remove(): Promise<void> };
    let relay: RelayProcess;
    let consumer: ConsumerProcess;
    let traffic: SteadyTraffic;
    let stalls: StallMonitor;
    const prefix = uniqueName('cluster-relay');
    const workerEnv = () => ({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: `${prefix}-queue`, RELAY_WORKFLOW_ID_PREFIX: prefix, RELAY_SHARDS: '2' });
    const outboxCli = (...args: string[]) =>
      run(process.execPath, [...nodeScript('src/cli/main.ts'), ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...workerEnv() }, timeout: 120_000 });
    const measured: string[] = [];

    before(async function () {
      if (config.temporal.server !== 'cluster') this.skip();
      db = await createTestDatabase();
      topic = await createTestTopic(3);
      await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, 20)');
      relay = new RelayProcess(workerEnv());
      consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('cluster-group'), taskQueue: uniqueName('cluster-credit') }));
      // Worker start-up (bundling workflows, joining the group) on a busy shared 2-core machine.
      await Promise.all([relay.waitUntilRunning(240_000), consumer.waitForLog((l) => l.msg === 'consumer worker running', 240_000)]);
      // The relay's shards as the README starts them.
      await outboxCli('relay', 'start', '--shards', '2');
      // 50 events a second in transactions of 10, for the whole describe.
      traffic = steadyTraffic(db.pool, { prefix: uniqueName('cluster-credit'), accounts: Array.from({ length: 20 }, (_, i) => i + 1), everyMs: 200, perTransaction: 10 });
      stalls = monitorStalls(db.pool, CONSUMER);
      await eventually('traffic flowing end to end', async () => (await tallyFailover(db.pool, CONSUMER, traffic.acknowledged.slice(0, 50))).lost.length === 0, 120_000, 500);
    });

    after(async () => {
      if (measured.length) say(`longest stalls:\n${measured.map((m) => `        ${m}`).join('\n')}`);
      await traffic?.stop();
      await stalls?.stop();
      // Whatever a failed step left stopped runs again for the tests after this one.
      if (config.temporal.server === 'cluster') await ensureTemporalCluster(config, paths, say);
      await outboxCli('relay', 'stop').catch(() => undefined);
      await relay?.kill9();
      await consumer?.stop('SIGKILL');
      await topic?.remove();
      await db?.drop();
    });

    /** Runs `fault`, then waits until both sides moved past what was committed before it ended; records the longest stall. */
    async function through(name: string, bound: number, fault: () => Promise<void>) {
      stalls.reset();
      const t0 = Date.now();
      await fault();
      const committed = traffic.acknowledged.length;
      await eventually(`${name}: everything committed before it ended applied`, async () => (await tallyFailover(db.pool, CONSUMER, traffic.acknowledged.slice(0, committed))).lost.length === 0, bound + 60_000, 500);
      const { relayMs, consumerMs } = stalls.longest();
      measured.push(`${name}: relay ${(relayMs / 1000).toFixed(1)} s, consumer ${(consumerMs / 1000).toFixed(1)} s (fault and recovery ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      assert.ok(relayMs < bound, `${name}: the relay stood still ${relayMs} ms (bound ${bound})`);
      assert.ok(consumerMs < bound, `${name}: the consumer stood still ${consumerMs} ms (bound ${bound})`);
    }

    const answers = () => eventually('the cluster answers through its one address', () => serverAnswers(config.temporal.address), 60_000, 500);

    it('kill -9 of a history host: its shards move to the other, and come back when it returns', async () => {
      await through('kill -9 history-1', STALL_BOUND_MS.killHistory, async () => {
        const before = await shardOwners();
        assert.ok([...before.values()].includes('history-1'), 'history-1 owns shards before the kill');
        await stopClusterPart(paths, 'history-1', 'kill');
        await eventually('every shard owned by history-2', async () => [...(await shardOwners()).values()].every((h) => h === 'history-2'), STALL_BOUND_MS.killHistory, 1000);
      });
      await through('history-1 back', STALL_BOUND_MS.restart, async () => {
        await ensureTemporalCluster(config, paths, say);
        await eventually('history-1 owns shards again', async () => [...(await shardOwners()).values()].includes('history-1'), 120_000, 1000);
      });
    });

    it('restart of the matching service', async () => {
      await through('restart matching', STALL_BOUND_MS.restart, async () => {
        await stopClusterPart(paths, 'matching-1');
        await ensureTemporalCluster(config, paths, say);
      });
    });

    it('restart of a frontend: clients reconnect through the one address to the other', async () => {
      await through('restart frontend-1', STALL_BOUND_MS.restart, async () => {
        await stopClusterPart(paths, 'frontend-1');
        await answers();
        await ensureTemporalCluster(config, paths, say);
      });
    });

    it('rolling restart of every service, one process at a time', async () => {
      await through('rolling restart', STALL_BOUND_MS.restart, async () => {
        for (const host of hosts) {
          await stopClusterPart(paths, host.name);
          await ensureTemporalCluster(config, paths, say);
          await answers();
        }
      });
    });

    it('loses nothing and applies nothing twice through all of it; doctor, relay status and inbox find answer on SQL visibility', async () => {
      await traffic.stop();
      const expected = traffic.acknowledged;
      await eventually('every acknowledged event applied', async () => (await tallyFailover(db.pool, CONSUMER, expected)).lost.length === 0, 180_000, 1000);
      const tally = await tallyFailover(db.pool, CONSUMER, expected);
      say(`${expected.length} events committed (${traffic.failed} transactions failed), lost ${tally.lost.length}, double-applied ${tally.doubleApplied}`);
      assert.deepEqual(tally.missingOutboxRows, []);
      assert.deepEqual(tally.lost, []);
      assert.equal(tally.doubleApplied, 0);
      assert.equal(tally.underApplied, 0);

      // Read right after the last event was applied, while visibility may still lag behind it.
      const last = expected.at(-1)!.event_id;
      const found = await outboxCli('inbox', 'find', '--event-id', last);
      assert.match(found.stdout, new RegExp(`event ${last}: applied by ${CONSUMER}`));
      const status = await outboxCli('relay', 'status');
      const shards = status.stdout.trim().split('\n').map((l) => JSON.parse(l) as { shardIndex: number });
      assert.deepEqual(shards.map((s) => s.shardIndex).sort(), [0, 1]);
      const doctor = await outboxCli('doctor', '--json').catch((err: { stdout?: string }) => err);
      const report = JSON.parse(doctor.stdout ?? '{}') as { checks?: { check: string; problems: { message: string }[] }[] };
      assert.ok(Array.isArray(report.checks) && report.checks.length > 0, `doctor answered with a report: ${doctor.stdout}`);
      const broken = report.checks.filter((c) => c.problems.some((p) => p.message.startsWith('the check itself failed')));
      assert.deepEqual(broken.map((c) => c.check), [], 'every check of the doctor ran to an answer');
      await eventually('the carrying run listed by inbox find once visibility caught up', async () => /carried it:/.test((await outboxCli('inbox', 'find', '--event-id', last)).stdout), 60_000, 1000);
    });
  });
});
