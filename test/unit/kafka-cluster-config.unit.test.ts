import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/env';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { newKafkaClusterId } from '../../tools/local-stack/kafka';

// The local Kafka's size and the topics' replication, as configuration declares them: one node
// and one replica unless a cluster is asked for; a cluster of 3 gets RF 3 and min ISR 2.
describe('Kafka cluster settings', () => {
  it('keeps the single local broker by default: one node on LOCAL_KAFKA_PORT, RF 1, min ISR 1', () => {
    const c = loadStackConfig({});
    assert.deepEqual(c.local.kafkaNodes, [{ nodeId: 1, port: 19092, controllerPort: 19093 }]);
    assert.deepEqual(c.kafka.brokers, ['127.0.0.1:19092']);
    assert.equal(c.kafka.replicationFactor, 1);
    assert.equal(c.kafka.minInsyncReplicas, 1);
  });

  it('runs three nodes on every other port with LOCAL_KAFKA_BROKERS=3, topics replicated 3 times, min ISR 2', () => {
    const c = loadStackConfig({ LOCAL_KAFKA_BROKERS: '3' });
    assert.deepEqual(c.local.kafkaNodes.map((n) => [n.nodeId, n.port, n.controllerPort]), [[1, 19092, 19093], [2, 19094, 19095], [3, 19096, 19097]]);
    assert.deepEqual(c.kafka.brokers, ['127.0.0.1:19092', '127.0.0.1:19094', '127.0.0.1:19096']);
    assert.equal(c.kafka.replicationFactor, 3);
    assert.equal(c.kafka.minInsyncReplicas, 2);
  });

  it('keeps RF 1 for an external Kafka unless told otherwise, and takes what it is told', () => {
    assert.equal(loadStackConfig({ KAFKA_BROKERS: 'k:9092' }).kafka.replicationFactor, 1);
    const c = loadStackConfig({ KAFKA_BROKERS: 'k:9092', KAFKA_REPLICATION_FACTOR: '3' });
    assert.deepEqual([c.kafka.replicationFactor, c.kafka.minInsyncReplicas], [3, 2]);
  });

  it('refuses settings no write could satisfy, and ports that collide', () => {
    assert.throws(() => loadStackConfig({ KAFKA_REPLICATION_FACTOR: '3' }), (e: ConfigError) => /3 replicas need at least as many brokers/.test(e.message));
    assert.throws(() => loadStackConfig({ KAFKA_BROKERS: 'k:9092', KAFKA_MIN_INSYNC_REPLICAS: '2' }), (e: ConfigError) => /exceeds the replication factor 1/.test(e.message));
    assert.throws(() => loadStackConfig({ LOCAL_KAFKA_BROKERS: '3', LOCAL_KAFKA_CONTROLLER_PORT: '19094' }), (e: ConfigError) => /need distinct ports/.test(e.message));
  });

  it('draws cluster ids the storage tool accepts: never one starting with "-", which it reads as an option', () => {
    // 0xf8 0x00… encodes as "-AA…" in URL-safe base64: the id that broke a CI run's SASL broker.
    const refused = Buffer.alloc(16, 0);
    refused[0] = 0xf8;
    assert.ok(refused.toString('base64url').startsWith('-'), 'the first draw is one the tool refuses');
    const draws = [refused, Buffer.alloc(16, 1)];
    const id = newKafkaClusterId(() => draws.shift() as Buffer);
    assert.equal(id, Buffer.alloc(16, 1).toString('base64url'));
    assert.equal(draws.length, 0, 'drew again after the refused id');
    assert.match(newKafkaClusterId(), /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  });
});
