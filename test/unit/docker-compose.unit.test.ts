import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { register } from 'prom-client';
import { loadConfig, PROJECT_ROOT } from '../../config/env';
import { workerTargets } from '../../infra/prometheus';
import '../../observability/consumer-group-metrics';
import '../../observability/consumer-metrics';
import '../../observability/relay-metrics';
import '../../observability/retention-metrics';

// No Docker engine runs where the tests run, so this checks what can be checked without one:
// the file parses, the host ports are the code's defaults, the workers it starts exist, and
// the variables it sets are ones the code reads.
describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
  const defaults = loadConfig({});
  const hostPorts = (service: string): number[] =>
    (compose.services[service].ports as string[]).map((p) => Number(p.split(':').slice(-2)[0]));

  it('publishes each service on the port the code uses by default', () => {
    assert.deepEqual(hostPorts('postgres'), [defaults.local.pgPort]);
    assert.deepEqual(hostPorts('kafka'), [defaults.local.kafkaPort]);
    assert.deepEqual(hostPorts('temporal'), [defaults.local.temporalPort]);
    assert.deepEqual(hostPorts('temporal-ui'), [defaults.local.temporalUiPort]);
  });

  it('advertises the host listener the code connects to', () => {
    assert.match(compose.services.kafka.environment.KAFKA_ADVERTISED_LISTENERS, new RegExp(`HOST://${defaults.kafka.brokers[0]}`));
  });

  it('starts worker entry points that exist, with configuration the code accepts', () => {
    for (const name of ['relay-worker', 'consumer-worker', 'retention-worker']) {
      const service = compose.services[name];
      const entry = service.command.at(-1) as string;
      assert.ok(fs.existsSync(path.join(PROJECT_ROOT, entry)), `${name} runs ${entry}, which must exist`);
      const config = loadConfig(service.environment);
      assert.equal(config.database.local, false, `${name} must use the compose PostgreSQL`);
      assert.equal(config.kafka.local, false);
      assert.equal(config.temporal.local, false);
      assert.equal(service.depends_on.setup.condition, 'service_completed_successfully');
    }
  });

  it('uses official images only', () => {
    const images = Object.values(compose.services).map((s) => (s as { image: string }).image);
    for (const image of images) assert.match(image, /^(postgres|apache\/kafka|temporalio\/[a-z-]+|node|prom\/prometheus|grafana\/grafana):/);
  });

  it('lets Prometheus scrape every worker on the ports the code serves metrics on, with the alert rules', () => {
    assert.deepEqual(hostPorts('prometheus'), [defaults.local.prometheusPort]);
    const mounts = compose.services.prometheus.volumes as string[];
    const prom = parse(fs.readFileSync(path.join(PROJECT_ROOT, mounts.find((m) => m.endsWith('prometheus.yml:ro'))!.split(':')[0]!), 'utf8'));
    const scraped = (prom.scrape_configs as { job_name: string; static_configs: { targets: string[] }[] }[]).map((j) => `${j.job_name}=${j.static_configs[0]!.targets[0]}`).sort();
    const expected = workerTargets(defaults).map((t) => `${t.job}=${t.address.replace('127.0.0.1', `${t.job.split('-')[0]}-worker`)}`).sort();
    assert.deepEqual(scraped, expected);
    for (const name of ['relay-worker', 'consumer-worker', 'retention-worker']) assert.equal(compose.services[name].environment.METRICS_HOST, '0.0.0.0');
    const alerts = parse(fs.readFileSync(path.join(PROJECT_ROOT, 'infra/prometheus/alerts.yml'), 'utf8'));
    assert.ok(alerts.groups[0].rules.length >= 5);
  });

  it("gives Grafana a dashboard whose queries use only metrics the workers export", () => {
    const dashboard = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'infra/grafana/dashboards/outbox.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
    assert.ok(exprs.length >= 15);
    const ours = new Set(register.getMetricsAsArray().map((m) => m.name));
    for (const expr of exprs) {
      for (const [name] of expr.matchAll(/\b(outbox|inbox|consumer_group|retention)_[a-z_]+/g)) {
        const base = name.replace(/_(bucket|sum|count)$/, '');
        assert.ok(ours.has(base), `${name} in "${expr}" is not a metric the workers export`);
      }
    }
  });
});
