import assert from 'node:assert/strict';
import { Client, type QueryConfig } from 'pg';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { startFaultProxy, type FaultLink, type FaultProxy } from '../kit/fault-proxy';

// The fault proxy itself, against the local PostgreSQL: each fault does to a real client what
// the fault tests rely on it doing.
describe('fault proxy (Toxiproxy + forgetting gate)', function () {
  this.timeout(600_000);
  let db: TestDatabase;
  let proxy: FaultProxy;
  let link: FaultLink;
  const clients: Client[] = [];

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    proxy = await startFaultProxy({ log: (m) => process.stdout.write(`${m}\n`) });
    link = await proxy.link('pg-fault-test', { host: '127.0.0.1', port: loadStackConfig().local.pgPort });
  });
  afterEach(async () => {
    await link.heal({ oldConnections: 'alive' });
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
  });
  after(async () => {
    await proxy?.close();
    await db?.drop();
  });

  async function through(): Promise<Client> {
    const u = new URL(db.url);
    u.host = link.address;
    const client = new Client({ connectionString: u.toString(), query_timeout: 1500, connectionTimeoutMillis: 1500 });
    client.on('error', () => undefined);
    clients.push(client);
    await client.connect();
    return client;
  }

  const answers = (c: Client) => c.query('select 1 as one').then(() => 'answered', (err: Error) => err.message);

  it('black hole: no answer and no close; heal with old connections dead: old ones stay silent, new ones pass', async () => {
    const old = await through();
    assert.equal(await answers(old), 'answered');
    await link.blackHole();
    assert.equal(await answers(old), 'Query read timeout');
    await assert.rejects(through(), /timeout/i);
    await link.heal({ oldConnections: 'dead' });
    const fresh = await through();
    assert.equal(await answers(fresh), 'answered');
    assert.equal(link.frozenConnections() >= 1, true, 'the old connection is held open, frozen');
    assert.equal(await answers(old), 'Query read timeout', 'the old connection never answers again');
  });

  it('forgetting the busiest connection: that one stays silent, the others and new ones pass', async () => {
    const quiet = await through();
    const busy = await through();
    for (let i = 0; i < 20; i++) await busy.query("select repeat('x', 1000)");
    link.forgetBusiestConnection();
    assert.equal(await answers(busy), 'Query read timeout', 'the busiest connection never answers again');
    assert.equal(await answers(quiet), 'answered', 'the others are untouched');
    assert.equal(await answers(await through()), 'answered', 'new connections pass');
    assert.equal(link.frozenConnections(), 1);
  });

  it('reset: the next byte gets a connection reset', async () => {
    const c = await through();
    await link.reset();
    assert.match(await answers(c), /ECONNRESET|Connection terminated|read ECONNRESET/);
  });

  it('latency with jitter, one direction, and heal with old connections alive', async () => {
    const c = await through();
    await link.latency({ ms: 400, jitterMs: 50, direction: 'downstream' });
    const t0 = Date.now();
    assert.equal(await c.query('select 1').then(() => 'answered'), 'answered');
    const took = Date.now() - t0;
    assert.ok(took >= 300 && took < 1400, `one round trip took ${took} ms with 400 ± 50 ms one way`);
    await link.heal({ oldConnections: 'alive' });
    const t1 = Date.now();
    assert.equal(await answers(c), 'answered');
    assert.ok(Date.now() - t1 < 300, 'the same connection answers at full speed after the heal');
  });

  it('bandwidth cap slows a large answer', async () => {
    const c = await through();
    await link.bandwidth({ kilobytesPerSecond: 100, direction: 'downstream' });
    const t0 = Date.now();
    await c.query({ text: `select repeat('x', 200000)`, query_timeout: 10_000 } as QueryConfig);
    const took = Date.now() - t0;
    assert.ok(took >= 1200, `200 kB at 100 kB/s took ${took} ms`);
  });
});
