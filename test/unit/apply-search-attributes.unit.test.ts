import assert from 'node:assert/strict';
import { applySearchAttributes, applyWorkflowsQuery } from '../../src/inbox/apply-search-attributes';
import type { EventBatch } from '../../workflows/inbox/contract';

// What an applyEventsWorkflow run is started with, so `inbox find --event-id` can list it.
describe('search attributes of an applyEventsWorkflow run', () => {
  const batch: EventBatch = {
    consumer: 'payments-credit',
    topics: ['payments.events', 'orders.events'],
    eventIds: ['a', 'b', 'c', 'd'],
    eventTypes: ['payment_confirmed', 'payment_confirmed', 'order_shipped', 'payment_confirmed'],
    topicIndex: [0, 0, 1, 0],
    partitions: [3, 0, 3, 3],
    offsets: ['1200', '7', '9007199254740991', '1299'],
    data: [{}, {}, {}, {}],
    payloadHashes: ['h', 'h', 'h', 'h'],
  };
  const byName = () => Object.fromEntries(applySearchAttributes(batch).map((p) => [p.key.name, p.value]));

  it('names every topic of the batch (sorted), not only the first', () => {
    assert.deepEqual(byName().OutboxKafkaTopics, ['orders.events', 'payments.events']);
  });

  it('names the partitions once each, and the lowest and highest offset over the batch', () => {
    const attrs = byName();
    assert.equal(attrs.OutboxConsumer, 'payments-credit');
    assert.deepEqual(attrs.OutboxKafkaPartitions, ['p0', 'p3']);
    assert.equal(attrs.OutboxKafkaOffsetMin, 7);
    assert.equal(attrs.OutboxKafkaOffsetMax, 9007199254740991);
  });

  it('handles a batch of many thousand offsets (no argument-count limit)', () => {
    const n = 200_000;
    const big: EventBatch = { ...batch, eventIds: Array.from({ length: n }, (_, i) => `e${i}`), topicIndex: new Array<number>(n).fill(0), partitions: new Array<number>(n).fill(1), offsets: Array.from({ length: n }, (_, i) => String(i + 5)) };
    const attrs = Object.fromEntries(applySearchAttributes(big).map((p) => [p.key.name, p.value]));
    assert.equal(attrs.OutboxKafkaOffsetMin, 5);
    assert.equal(attrs.OutboxKafkaOffsetMax, n + 4);
  });

  it('builds the list query for one event, quoting names', () => {
    assert.equal(
      applyWorkflowsQuery("it's", 'payments.events', 3, 1234),
      "OutboxConsumer = 'it''s' AND OutboxKafkaTopics = 'payments.events' AND OutboxKafkaPartitions = 'p3' AND OutboxKafkaOffsetMin <= 1234 AND OutboxKafkaOffsetMax >= 1234",
    );
  });
});
