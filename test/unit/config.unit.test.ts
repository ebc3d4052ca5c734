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

  it('exports no traces unless an OTLP endpoint is set; the standard OTEL_* names when it is', () => {
    assert.equal(loadConfig({}).tracing.otlpTracesUrl, undefined);
    const base = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%20b, tenant=t1', OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing;
    assert.deepEqual(base, { otlpTracesUrl: 'http://collector:4318/v1/traces', otlpHeaders: { 'x-api-key': 'a b', tenant: 't1' }, serviceName: undefined, sampleRatio: 0.25 });
    const full = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces', OTEL_SERVICE_NAME: 'svc' }).tracing;
    assert.equal(full.otlpTracesUrl, 'https://b/traces');
    assert.equal(full.serviceName, 'svc');
    assert.throws(
      () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector', OTEL_EXPORTER_OTLP_HEADERS: 'no-equals', OTEL_TRACES_SAMPLER_ARG: '2' }),
      (err: unknown) => err instanceof ConfigError && err.problems.length === 3 && !err.message.includes('no-equals'),
    );
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
