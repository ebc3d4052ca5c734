import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../config/env';

describe('loadConfig', () => {
  it('uses the local stack when no service is configured', () => {
    const config = loadConfig({});
    assert.equal(config.database.local, true);
    assert.equal(config.kafka.local, true);
    assert.equal(config.temporal.local, true);
    assert.equal(config.database.url, 'postgres://outbox@127.0.0.1:54329/outbox');
  });

  it('switches a service to the user\'s own when its variable is set', () => {
    const config = loadConfig({ KAFKA_BROKERS: 'k1:9092, k2:9092', DATABASE_URL: 'postgres://u:p@db:5432/x' });
    assert.deepEqual(config.kafka.brokers, ['k1:9092', 'k2:9092']);
    assert.equal(config.kafka.local, false);
    assert.equal(config.database.local, false);
    assert.equal(config.temporal.local, true);
  });

  it('reports every invalid variable at once', () => {
    assert.throws(
      () => loadConfig({ LOCAL_PG_PORT: 'x', RELAY_SHARDS: '0', KAFKA_TOPIC: 'bad topic!' }),
      (err: unknown) => err instanceof ConfigError && err.problems.length === 3,
    );
  });

  it('refuses an inbox horizon shorter than topic retention plus consumer lag', () => {
    assert.throws(
      () => loadConfig({ KAFKA_TOPIC_RETENTION_MS: '1000', CONSUMER_MAX_LAG_MS: '1000', INBOX_RETENTION_MS: '1500' }),
      /INBOX_RETENTION_MS: 1500 ms must exceed KAFKA_TOPIC_RETENTION_MS \+ CONSUMER_MAX_LAG_MS \(2000 ms\)/,
    );
  });

  it('reports every cross-setting problem at once, each naming its variables', () => {
    assert.throws(
      () => loadConfig({ INBOX_RETENTION_MS: '5', LOCAL_KAFKA_BROKERS: '3', LOCAL_KAFKA_CONTROLLER_PORT: '19094' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 2 &&
        err.problems[0]!.startsWith('INBOX_RETENTION_MS: 5 ms') &&
        err.problems[1]!.startsWith('LOCAL_KAFKA_PORT / LOCAL_KAFKA_CONTROLLER_PORT: 3 local brokers'),
    );
  });
});
