import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { createPool, inTransaction } from '../../src/db/pool';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { MovingAddress } from '../kit/moving-address';

// A connection reset while a transaction holds it between two statements, as every connection
// sees a managed PostgreSQL's failover: the transaction fails with an error its caller can retry,
// the process lives on, and the pool's next transaction gets a working connection, not the
// broken one. (Before, the reset came as an 'error' event nobody listened to: Node ended the
// process, which is how the consumer worker died in test/e2e/postgres-failover.e2e.test.ts.)
describe('inTransaction: the connection reset mid-transaction', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let address: MovingAddress;
  let pool: Pool;

  before(async () => {
    db = await createTestDatabase();
    address = await MovingAddress.listen(Number(new URL(db.url).port));
    pool = createPool(address.url(db.url), { max: 1, connectionTimeoutMillis: 2000 });
  });
  after(async () => {
    await pool?.end().catch(() => undefined);
    await address?.close();
    await db?.drop();
  });

  it('fails the transaction, keeps the process, and the next transaction works', async () => {
    const failed = inTransaction(pool, async (tx) => {
      await tx.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ('reset-test', 'e-1')`);
      // Between two statements: the server is gone and no query is waiting for it.
      address.moveTo(Number(new URL(db.url).port));
      await sleep(300);
      await tx.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ('reset-test', 'e-2')`);
    });
    await assert.rejects(failed, /Connection terminated|not queryable|Client has encountered a connection error/);

    await inTransaction(pool, (tx) => tx.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ('reset-test', 'e-3')`));
    const { rows } = await db.pool.query<{ event_id: string }>(`SELECT event_id FROM temporal_outbox.inbox_processed_events WHERE consumer = 'reset-test' ORDER BY event_id`);
    assert.deepEqual(rows.map((r) => r.event_id), ['e-3'], 'the reset transaction left nothing; the next one committed');
  });
});
