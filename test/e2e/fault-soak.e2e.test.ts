import assert from 'node:assert/strict';
import { readLedger } from '../../tools/soak/tally';
import { runFaultSoak, type SoakResult } from '../../tools/soak/run-fault-soak';

// The fault soak's short form (its full form is `npm run soak`, results in tools/bench/results/fault-soak.json):
// while two producers write through `enqueue` and plain SQL, kill -9 the relay and the consumer
// worker and crash (kill -9 of the process group, then restart) PostgreSQL, Kafka and Temporal,
// each on a stack of its own. Afterwards nothing is lost and nothing is applied twice.
describe('fault soak (short): kill -9 of workers and crashes of every service while events flow', function () {
  this.timeout(900_000);
  let result: SoakResult;
  const tallyCanFail: { lostAfterDeletingAnInboxRow?: number; doubleAppliedAfterAnExtraCredit?: number } = {};

  before(async () => {
    result = await runFaultSoak({
      events: 2000,
      workerKills: 4,
      serviceCrashes: 1,
      faultEverySeconds: 5,
      maxMinutes: 10,
      log: (m) => process.stdout.write(`      [soak] ${m}\n`),
      // The tally must be able to say no: forget one applied event, credit one account twice.
      inspect: async (pool) => {
        await pool.query(`DELETE FROM temporal_outbox.inbox_processed_events WHERE event_id = (SELECT event_id FROM temporal_outbox.inbox_processed_events LIMIT 1)`);
        await pool.query(`UPDATE accounts SET balance = balance + 1 WHERE account_id = (SELECT min(account_id) FROM accounts)`);
        const ledger = await readLedger(pool);
        tallyCanFail.lostAfterDeletingAnInboxRow = ledger.lost;
        tallyCanFail.doubleAppliedAfterAnExtraCredit = ledger.doubleApplied;
      },
    });
    process.stdout.write(`      [soak] ${JSON.stringify({ ...result, timeline: undefined })}\n`);
  });

  it('performed the faults it promised, while both producers wrote', () => {
    assert.deepEqual(result.kills, { relay: 2, consumer: 2, total: 4 });
    assert.deepEqual(result.crashes, { postgres: 1, kafka: 1, temporal: 1 });
    assert.equal(result.events.api, 1000);
    assert.equal(result.events.sql, 1000);
  });

  it('loses nothing and applies nothing twice', () => {
    assert.ok(result.drained, 'the pipeline drained before the deadline');
    assert.equal(result.lost, 0);
    assert.equal(result.doubleApplied, 0);
    assert.equal(result.parked, 0);
  });

  it('would have said so: the tally sees a forgotten event and a double credit', () => {
    assert.equal(tallyCanFail.lostAfterDeletingAnInboxRow, 1);
    assert.equal(tallyCanFail.doubleAppliedAfterAnExtraCredit, 1);
  });
});
