import assert from 'node:assert/strict';
import { resolveConfig } from '../../src/config/resolve';
import { silenceBoundMs } from '../../src/kafka/connection-options';

// How long a Kafka connection may stay silent with a request out before it is destroyed
// (docs/guarantees.md#dead-links): a group member waits out a JoinGroup, a producer or admin only
// its request timeout.
describe('the Kafka dead-connection bound', () => {
  const config = resolveConfig({ kafka: { brokers: ['127.0.0.1:9092'] } });

  it('is max(request timeout, rebalance timeout) + 5 s for a group member: 25 s at the defaults', () => {
    assert.equal(silenceBoundMs(config), 25_000);
    assert.equal(silenceBoundMs(config, true), 25_000);
  });

  it('is the request timeout + 1 s for clients that join no group (a producer, an admin): 16 s at the defaults', () => {
    assert.equal(silenceBoundMs(config, false), 16_000);
    const slow = resolveConfig({ kafka: { brokers: ['127.0.0.1:9092'] }, links: { kafka: { requestTimeoutMs: 40_000 } } });
    assert.equal(silenceBoundMs(slow, false), 41_000, 'it follows KAFKA_REQUEST_TIMEOUT_MS');
  });
});
