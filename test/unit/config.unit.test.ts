import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig, resolveConfig } from '../../src/config/env';
import { DEFAULTS } from '../../src/config/defaults';

describe('resolveConfig', () => {
  it('completes a partial options object with the documented defaults, reading no environment', () => {
    const saved = process.env.KAFKA_BROKERS;
    process.env.KAFKA_BROKERS = 'from-the-environment:9092';
    try {
      const config = resolveConfig({ kafka: { brokers: ['mine:9092'] }, relay: { shards: 3 }, database: { url: 'postgres://u:p@db/x' } });
      assert.deepEqual(config.kafka.brokers, ['mine:9092']);
      assert.equal(config.relay.shards, 3);
      assert.equal(config.relay.batchSize, DEFAULTS.relay.batchSize, 'a setting not given keeps its default');
      assert.equal(config.database.workerUrls.consumer, 'postgres://u:p@db/x', 'a worker without a URL of its own uses database.url');
      assert.equal(config.relay.workflowId(2), 'outbox-relay-shard-2');
      assert.equal(config.audit.taskQueue, config.retention.taskQueue);
      assert.equal(config.kafka.leanEncoder, false, 'nothing patches kafkajs unless asked');
      assert.equal(config.metrics.portBase, undefined, 'no metrics endpoint unless asked');
      assert.deepEqual(resolveConfig().kafka.brokers, DEFAULTS.kafka.brokers, 'KAFKA_BROKERS is not read');
    } finally {
      if (saved === undefined) delete process.env.KAFKA_BROKERS;
      else process.env.KAFKA_BROKERS = saved;
    }
  });

  it('refuses settings that contradict each other, naming every one', () => {
    assert.throws(
      () => resolveConfig({ inbox: { retentionMs: 5 }, kafka: { minInsyncReplicas: 2 } }),
      (err: unknown) => err instanceof ConfigError && err.problems.length === 2 && err.problems[0]!.startsWith('inbox.retentionMs (INBOX_RETENTION_MS): 5 ms'),
    );
  });
});

describe('loadConfig', () => {
  it('has no side effects: without DATABASE_URL it leaves the URL unset and writes no file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-config-'));
    try {
      const config = loadConfig({ OUTBOX_CACHE_DIR: dir });
      assert.equal(config.database.url, undefined);
      assert.equal(config.database.workerUrls.relay, undefined);
      assert.deepEqual(fs.readdirSync(dir), [], 'nothing written into the cache folder');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('adds DATABASE_SSLMODE and DATABASE_SSLROOTCERT to every database URL that names no sslmode of its own', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x', RELAY_DATABASE_URL: 'postgres://r:q@db:5432/x?sslmode=disable', DATABASE_SSLMODE: 'verify-full', DATABASE_SSLROOTCERT: '/etc/ca.pem' });
    assert.equal(config.database.url, 'postgres://u:p@db:5432/x?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&uselibpqcompat=true');
    assert.equal(config.database.workerUrls.consumer, config.database.url);
    assert.equal(config.database.workerUrls.relay, 'postgres://r:q@db:5432/x?sslmode=disable', 'a URL with its own sslmode is left alone');
  });

  it('reads managed-service credentials and reports every missing or contradictory one at once', () => {
    const kafka = loadConfig({ KAFKA_BROKERS: 'k:9093', KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: 's3cret', KAFKA_SSL: 'true' });
    assert.deepEqual(kafka.kafka.ssl, { ca: undefined, cert: undefined, key: undefined, rejectUnauthorized: true });
    assert.deepEqual(kafka.kafka.sasl, { mechanism: 'scram-sha-512', username: 'svc', password: 's3cret' });
    assert.throws(
      () => loadConfig({ KAFKA_SASL_MECHANISM: 'plain', TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/client.pem', KAFKA_SASL_PASSWORD: 'x', KAFKA_SASL_PASSWORD_FILE: '/nonexistent/pw' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.some((p) => /KAFKA_SASL_MECHANISM=plain needs KAFKA_SASL_USERNAME/.test(p)) &&
        err.problems.some((p) => /TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/.test(p)) &&
        err.problems.some((p) => /KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE: set one of them/.test(p)),
    );
  });

  it("reads Temporal's connection under @temporalio/envconfig's names: an API key turns TLS on", () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'key-1' });
    assert.equal(config.temporal.address, 'ns.acct.tmprl.cloud:7233');
    assert.equal(config.temporal.namespace, 'ns.acct');
    assert.equal(config.temporal.apiKey, 'key-1');
    assert.equal(config.temporal.tls, true);
    assert.deepEqual(config.notices, []);
  });

  it('reads a profile of TEMPORAL_CONFIG_FILE chosen by TEMPORAL_PROFILE; the variables override it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-temporal-'));
    try {
      const file = path.join(dir, 'temporal.toml');
      fs.writeFileSync(file, '[profile.staging]\naddress = "staging.example:7233"\nnamespace = "staging"\n');
      const config = loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging', TEMPORAL_NAMESPACE: 'override' });
      assert.equal(config.temporal.address, 'staging.example:7233');
      assert.equal(config.temporal.namespace, 'override');
      assert.throws(() => loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' }), /Profile 'nope' not found/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps today's Temporal names working, with a notice naming each one's replacement", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-temporal-'));
    try {
      const ca = path.join(dir, 'ca.pem');
      fs.writeFileSync(ca, 'not really a certificate');
      const keyFile = path.join(dir, 'key');
      fs.writeFileSync(keyFile, 'key-2\n');
      const config = loadConfig({ TEMPORAL_TLS_CA_FILE: ca, TEMPORAL_API_KEY_FILE: keyFile });
      assert.equal(config.temporal.apiKey, 'key-2');
      assert.deepEqual(typeof config.temporal.tls === 'object' ? Buffer.from(config.temporal.tls.serverRootCACertificate ?? []).toString() : undefined, 'not really a certificate');
      assert.deepEqual(config.notices, [
        'TEMPORAL_TLS_CA_FILE is deprecated: use TEMPORAL_TLS_SERVER_CA_CERT_PATH (@temporalio/envconfig\'s name)',
        'TEMPORAL_API_KEY_FILE is deprecated: use TEMPORAL_API_KEY, or api_key in a TEMPORAL_CONFIG_FILE profile',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exports no traces unless an OTLP endpoint is set; the standard OTEL_* names when it is', () => {
    assert.equal(loadConfig({}).tracing.otlpTracesUrl, undefined);
    const base = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%20b, tenant=t1', OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing;
    assert.deepEqual(base, { otlpTracesUrl: 'http://collector:4318/v1/traces', otlpHeaders: { 'x-api-key': 'a b', tenant: 't1' }, sampleRatio: 0.25 });
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
      () => loadConfig({ KAFKA_PARTITIONS: 'x', RELAY_SHARDS: '0', KAFKA_TOPIC: 'bad topic!' }),
      (err: unknown) => err instanceof ConfigError && err.problems.length === 3,
    );
  });

  it('refuses an inbox horizon shorter than topic retention plus consumer lag', () => {
    assert.throws(
      () => loadConfig({ KAFKA_TOPIC_RETENTION_MS: '1000', CONSUMER_MAX_LAG_MS: '1000', INBOX_RETENTION_MS: '1500' }),
      /INBOX_RETENTION_MS\): 1500 ms must exceed .*KAFKA_TOPIC_RETENTION_MS \+ CONSUMER_MAX_LAG_MS, 2000 ms\)/,
    );
  });

  it('serves metrics from 19400 unless METRICS_PORT_BASE says otherwise (0: off)', () => {
    assert.equal(loadConfig({}).metrics.portBase, 19400);
    assert.equal(loadConfig({ METRICS_PORT_BASE: '0' }).metrics.portBase, undefined);
  });
  it('reads the dead-link bounds and broker routes, and reports a malformed route', () => {
    const config = loadConfig({ KAFKA_BROKER_ROUTES: 'b-1.internal:9092=127.0.0.1:19001, b-2.internal:9092=127.0.0.1:19002', DATABASE_QUERY_TIMEOUT_MS: '20000' });
    assert.deepEqual(config.links.kafka.brokerRoutes, { 'b-1.internal:9092': '127.0.0.1:19001', 'b-2.internal:9092': '127.0.0.1:19002' });
    assert.equal(config.links.database.queryTimeoutMs, 20_000);
    assert.deepEqual(config.links.health, { intervalMs: 2_000, timeoutMs: 5_000, failures: 3, failingForMs: 10_000 });
    assert.throws(
      () => loadConfig({ KAFKA_BROKER_ROUTES: 'b-1.internal=127.0.0.1:19001' }),
      (err: unknown) => err instanceof ConfigError && err.problems.some((p) => p.includes('KAFKA_BROKER_ROUTES: "b-1.internal=127.0.0.1:19001"')),
    );
  });
});
