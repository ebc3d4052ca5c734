import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/env';

describe('loadConfig', () => {
  it('uses the local stack when no service is configured', () => {
    const config = loadConfig({ LOCAL_PG_PASSWORD: 'pw-owner-1', LOCAL_PG_RELAY_PASSWORD: 'pw-relay-1', LOCAL_PG_CONSUMER_PASSWORD: 'pw-consumer-1', LOCAL_PG_RETENTION_PASSWORD: 'pw-retention-1' });
    assert.equal(config.database.local, true);
    assert.equal(config.kafka.local, true);
    assert.equal(config.temporal.local, true);
    assert.equal(config.database.url, 'postgres://outbox:pw-owner-1@127.0.0.1:54329/outbox');
    // Each worker logs in as its own component's user on the local stack.
    assert.equal(config.database.workerUrls.relay, 'postgres://outbox_relay_worker:pw-relay-1@127.0.0.1:54329/outbox');
  });

  it('adds DATABASE_SSLMODE and DATABASE_SSLROOTCERT to every database URL that names no sslmode of its own', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x', RELAY_DATABASE_URL: 'postgres://r:q@db:5432/x?sslmode=disable', DATABASE_SSLMODE: 'verify-full', DATABASE_SSLROOTCERT: '/etc/ca.pem' });
    assert.equal(config.database.url, 'postgres://u:p@db:5432/x?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&uselibpqcompat=true');
    assert.equal(config.database.workerUrls.consumer, config.database.url);
    assert.equal(config.database.workerUrls.relay, 'postgres://r:q@db:5432/x?sslmode=disable', 'a URL with its own sslmode is left alone');
  });

  it('reads managed-service credentials and reports every missing or contradictory one at once', () => {
    const kafka = loadConfig({ KAFKA_BROKERS: 'k:9093', KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: 's3cret', KAFKA_SSL: 'true' });
    assert.deepEqual(kafka.security.kafka, { ssl: { ca: undefined, cert: undefined, key: undefined, rejectUnauthorized: true }, sasl: { mechanism: 'scram-sha-512', username: 'svc', password: 's3cret' } });
    const temporal = loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'key-1' });
    assert.deepEqual(temporal.security.temporal, { tls: { serverName: undefined, ca: undefined, clientCertPair: undefined }, apiKey: 'key-1' }, 'an API key turns TLS on');
    assert.throws(
      () => loadConfig({ KAFKA_SASL_MECHANISM: 'plain', TEMPORAL_TLS_CERT_FILE: '/nonexistent/client.pem', KAFKA_SASL_PASSWORD: 'x', KAFKA_SASL_PASSWORD_FILE: '/nonexistent/pw' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.some((p) => /KAFKA_SASL_MECHANISM=plain needs KAFKA_SASL_USERNAME/.test(p)) &&
        err.problems.some((p) => /TEMPORAL_TLS_CERT_FILE: cannot read \/nonexistent\/client.pem \(ENOENT\)/.test(p)) &&
        err.problems.some((p) => /TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE/.test(p)) &&
        err.problems.some((p) => /KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE: set one of them/.test(p)),
    );
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
  it('reads the dead-link bounds and broker routes, and reports a malformed route', () => {
    const config = loadConfig({ KAFKA_BROKER_ROUTES: 'b-1.internal:9092=127.0.0.1:19001, b-2.internal:9092=127.0.0.1:19002', DATABASE_QUERY_TIMEOUT_MS: '20000' });
    assert.deepEqual(config.links.kafka.brokerRoutes, { 'b-1.internal:9092': '127.0.0.1:19001', 'b-2.internal:9092': '127.0.0.1:19002' });
    assert.equal(config.links.database.queryTimeoutMs, 20_000);
    assert.deepEqual(config.links.health, { intervalMs: 5_000, timeoutMs: 5_000, failures: 2 });
    assert.throws(
      () => loadConfig({ KAFKA_BROKER_ROUTES: 'b-1.internal=127.0.0.1:19001' }),
      (err: unknown) => err instanceof ConfigError && err.problems.some((p) => p.includes('KAFKA_BROKER_ROUTES: "b-1.internal=127.0.0.1:19001"')),
    );
  });
});
