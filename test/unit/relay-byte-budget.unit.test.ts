import assert from 'node:assert/strict';
import { RECORD_OVERHEAD_BYTES } from '../../src/outbox/kafka-message';
import { planByteBudget } from '../../src/outbox/plan-byte-budget';

const sized = (...bytes: number[]) => bytes.map((payloadBytes, i) => ({ id: i + 1, payloadBytes }));
const LIMIT = 1_000_000;

describe('relay byte budget (unit)', () => {
  it('takes the id-order prefix that fits the budget and leaves the rest pending', () => {
    const plan = planByteBudget(sized(400, 400, 400, 10), 1_000, LIMIT);
    // The fourth row would fit on its own, but taking it would let it overtake row 3.
    assert.deepEqual(plan.loadIds, [1, 2]);
    assert.equal(plan.loadBytes, 800);
    assert.equal(plan.deferred, 2);
    assert.deepEqual(plan.oversized, []);
  });

  it('always takes one legal row, even one larger than the whole budget', () => {
    const plan = planByteBudget(sized(900_000, 100), 64 * 1024, LIMIT);
    assert.deepEqual(plan.loadIds, [1]);
    assert.equal(plan.deferred, 1);
  });

  it('parks unread only rows that cannot fit whatever their key and headers', () => {
    const justUnder = LIMIT - RECORD_OVERHEAD_BYTES;
    const plan = planByteBudget(sized(100, justUnder + 1, justUnder, 200), 16 * 1024 * 1024, LIMIT);
    assert.deepEqual(plan.oversized.map((o) => o.id), [2]);
    assert.match(plan.oversized[0]!.reason, /message of at least 1000001 bytes \(payload 999873 bytes\) exceeds the 1000000-byte Kafka limit/);
    // Row 3 is loaded: its exact size (key, headers) is checked after loading.
    assert.deepEqual(plan.loadIds, [1, 3, 4]);
  });

  it('an oversized row does not stop the batch: later rows are still taken', () => {
    const plan = planByteBudget(sized(2_000_000, 10, 10), 1_000, LIMIT);
    assert.deepEqual(plan.loadIds, [2, 3]);
    assert.equal(plan.oversized.length, 1);
  });
});
