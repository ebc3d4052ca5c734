import { loadStackConfig } from '../../tools/local-stack/stack-config';
import assert from 'node:assert/strict';
import { postgresProbe } from '../../workers/link-health';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { startFaultProxy, type FaultProxy } from '../kit/fault-proxy';
import { uniqueName } from '../kit/ids';

// The workers' PostgreSQL health probe runs every 2 s. It keeps its own connection while that
// answers: a new connection each round (a backend started, SCRAM, torn down) cost the relay its
// wake-up latency at a trickle. A failure drops the connection, so a link that heals with its old
// connections dead still passes at the next round, on a new one.
describe('link health: the PostgreSQL probe', function () {
  this.timeout(120_000);
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

  /** The backends the probe holds open now (its application_name), by pid. */
  const probeBackends = async (): Promise<number[]> => {
    const { rows } = await db.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'outbox-health-check' ORDER BY pid`,
    );
    return rows.map((r) => r.pid);
  };

  it('answers on one kept connection round after round, and on a new one after a failure', async () => {
    const link = await proxy.link(uniqueName('pg-probe'), { host: '127.0.0.1', port: loadStackConfig().local.pgPort });
    const url = new URL(db.url);
    url.host = link.address;
    const probe = postgresProbe(url.toString(), 1_500);
    try {
      const seen: number[][] = [];
      for (let round = 0; round < 3; round++) {
        await probe();
        seen.push(await probeBackends());
      }
      assert.equal(seen[0]!.length, 1, `one probe connection open after the first round: ${JSON.stringify(seen)}`);
      assert.deepEqual(seen[1], seen[0], 'the second round used the same backend');
      assert.deepEqual(seen[2], seen[0], 'the third round used the same backend');

      await link.blackHole();
      await assert.rejects(probe(), 'a black-holed link fails the probe');
      await link.heal({ oldConnections: 'dead' });
      await probe();
      const after = await probeBackends();
      assert.ok(
        after.some((pid) => !seen[0]!.includes(pid)),
        `after the heal the probe answered on a new connection (before: ${JSON.stringify(seen[0])}, now: ${JSON.stringify(after)})`,
      );
    } finally {
      await probe.close?.();
    }
  });
});
