import { loadStackConfig } from '../../tools/local-stack/stack-config';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import type { PoolClient } from 'pg';
import { loadConfig } from '../../src/config/env';
import { createPool, databaseTimeouts } from '../../src/db/pool';
import { kafkaConnectionOptions } from '../../src/kafka/connection-options';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { startFaultProxy, type FaultProxy } from '../kit/fault-proxy';
import { uniqueName } from '../kit/ids';

// No call waits for ever on a link that stops answering without closing (a NAT or load balancer
// forgot it): client-side timeouts notice it, and a connection that timed out is never handed
// out again, so the pool recovers by itself once new connections pass.
describe('dead links (client-side bounds)', function () {
  this.timeout(600_000);
  let db: TestDatabase;
  let proxy: FaultProxy;

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    proxy = await startFaultProxy();
  });
  after(async () => {
    await proxy?.close();
    await db?.drop();
  });

  it('PostgreSQL: a black-holed query fails within the query timeout, and after a heal that leaves old connections dead the pool answers again', async () => {
    const link = await proxy.link(uniqueName('pg'), { host: '127.0.0.1', port: loadStackConfig().local.pgPort });
    const config = loadConfig({ ...process.env, DATABASE_STATEMENT_TIMEOUT_MS: '1000', DATABASE_QUERY_TIMEOUT_MS: '1500', DATABASE_CONNECT_TIMEOUT_MS: '1500' });
    const url = new URL(db.url);
    url.host = link.address;
    const pool = createPool(url.toString(), { max: 2, ...databaseTimeouts(config) });
    let held: PoolClient | undefined;
    try {
      // Two connections open, one checked out by a caller that releases it after its error, as
      // inTransaction and the relay's sessions do.
      held = await pool.connect();
      await pool.query('select 1');
      await link.blackHole();
      const t0 = Date.now();
      // The query timeout is the statement timeout (1 s) + 5 s: the server's error would come first on a live link.
      const failures = await Promise.all([held!.query('select 1'), pool.query('select 1')].map((q) => q.then(() => 'answered', (err: Error) => err.message)));
      const took = Date.now() - t0;
      assert.deepEqual(failures, ['Query read timeout', 'Query read timeout']);
      assert.ok(took < 9_000, `both timed out within their bound (${took} ms)`);
      held!.release();
      held = undefined;
      await link.heal({ oldConnections: 'dead' });
      // Without the destroy, the pool hands out the dead connections again: this times out.
      const answers = await pool.query('select 2 as two').then((r) => r.rows[0].two as number, (err: Error) => err.message);
      assert.equal(answers, 2);
      assert.equal(pool.totalCount, 1, 'the two dead connections were dropped, one new one opened');
    } finally {
      held?.release(true);
      await pool.end().catch(() => undefined);
    }
  });

  it('Kafka: a request on a black-holed broker link fails within the request timeout, and the client reconnects after the heal', async () => {
    const base = loadConfig();
    const broker = base.kafka.brokers[0]!;
    const [host, port] = [broker.slice(0, broker.lastIndexOf(':')), Number(broker.slice(broker.lastIndexOf(':') + 1))];
    const link = await proxy.link(uniqueName('kafka'), { host, port });
    // The broker keeps advertising its own address; the route sends this client's connections to it through the proxy.
    const config = loadConfig({ ...process.env, KAFKA_BROKER_ROUTES: `${broker}=${link.address}`, KAFKA_REQUEST_TIMEOUT_MS: '2000', KAFKA_CONNECTION_TIMEOUT_MS: '2000', CONSUMER_REBALANCE_TIMEOUT_MS: '10000' });
    const kafka = new Kafka({ clientId: uniqueName('dead-link'), ...kafkaConnectionOptions(config), logLevel: logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.listTopics();
      await link.blackHole();
      const t0 = Date.now();
      await assert.rejects(admin.listTopics());
      const took = Date.now() - t0;
      assert.ok(took < 15_000, `failed within its bounds (${took} ms)`);
      await link.heal({ oldConnections: 'dead' });
      // The dead socket is closed after 15 s of silence (10 s rebalance timeout + 5 s), then kafkajs reconnects.
      const deadline = Date.now() + 40_000;
      let listed = false;
      while (!listed && Date.now() < deadline) listed = await admin.listTopics().then(() => true, () => false);
      assert.equal(listed, true, 'the admin client answers again through new connections');
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  });
});
