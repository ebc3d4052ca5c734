import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/program';
import { PROJECT_ROOT } from '../../src/config/env';
import { OUTBOX_REGISTRY } from '../../src/observability/registry';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { workerTargets } from '../../tools/local-stack/prometheus';
import '../../src/observability/consumer-group-metrics';
import '../../src/observability/audit-metrics';
import '../../src/observability/consumer-metrics';
import '../../src/observability/relay-metrics';
import '../../src/observability/retention-metrics';
import { WORKER_NODE_ARGS } from '../../workers/node-args';
import { withExampleSettings } from '../../examples/example-settings';

// No Docker engine runs where the tests run, so this checks what can be checked without one:
// the file parses, every service waits on real readiness of what it needs, the start step runs
// CLI commands that exist, the image is built from a Dockerfile (no host node_modules inside),
// the entry points exist, and ports and variables are the code's defaults.

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: unknown[];
  ports?: string[];
}

const APP_SERVICES = ['setup', 'relay-worker', 'consumer-worker', 'retention-worker', 'demo-traffic'];
const WORKERS = { 'relay-worker': 'relay', 'consumer-worker': 'consumer', 'retention-worker': 'retention' } as const;

const read = (file: string) => fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');

/** Dockerfile instructions, one per entry, continuation lines joined and comments dropped. */
function dockerfileInstructions(text: string): { op: string; args: string }[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(' ') };
    });
}

/** The CLI subcommand a `node --import tsx src/cli/main.ts a b --opt` argument list invokes, or undefined. */
function cliSubcommand(program: Command, argv: string[]): Command | undefined {
  let command = program;
  for (const word of argv) {
    if (word.startsWith('-')) break;
    const next = command.commands.find((c) => c.name() === word);
    if (!next) return undefined;
    command = next;
  }
  return command === program ? undefined : command;
}

/** Splits a `sh -c "a && b && c"` start step into the argument lists of its commands. */
function shellSteps(command: string[]): string[][] {
  assert.deepEqual(command.slice(0, 2), ['sh', '-c'], 'the start step is one shell line');
  return command[2]!.split('&&').map((step) => step.trim().split(/\s+/));
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
  const services = compose.services;
  const defaults = loadStackConfig({});
  const program = buildProgram();
  const hostPorts = (service: string): number[] => services[service]!.ports!.map((p) => Number(p.split(':').slice(-2)[0]));
  const healthcheck = (service: string): string => {
    const test = services[service]!.healthcheck?.test;
    assert.ok(test, `${service} needs a healthcheck, or nothing can wait for it to be ready`);
    return test.slice(1).join(' ');
  };

  it('publishes each service on the port the code uses by default', () => {
    assert.deepEqual(hostPorts('postgres'), [defaults.local.pgPort]);
    assert.deepEqual(hostPorts('kafka'), [defaults.local.kafkaPort]);
    assert.deepEqual(hostPorts('temporal'), [defaults.local.temporalPort]);
    assert.deepEqual(hostPorts('temporal-ui'), [defaults.local.temporalUiPort]);
  });

  it('advertises the host listener the code connects to', () => {
    assert.match(services.kafka!.environment!.KAFKA_ADVERTISED_LISTENERS!, new RegExp(`HOST://${defaults.kafka.brokers[0]}`));
  });

  it('checks real readiness of every service: PostgreSQL over TCP, the Kafka broker API, Temporal and its namespace, the UI', () => {
    assert.match(healthcheck('postgres'), /^pg_isready .*-h 127\.0\.0\.1 .*-U outbox/);
    // The broker answers API requests on the listener the workers use (kafka:29092), not just a port.
    const internal = services.kafka!.environment!.KAFKA_ADVERTISED_LISTENERS!.match(/INTERNAL:\/\/([^,]+)/)![1]!;
    assert.match(healthcheck('kafka'), new RegExp(`kafka-broker-api-versions\\.sh --bootstrap-server ${internal}$`));
    assert.match(healthcheck('temporal'), /temporal operator cluster health --address temporal:7233/);
    assert.match(healthcheck('temporal'), /temporal operator namespace describe --namespace default --address temporal:7233/);
    assert.equal(services['temporal-ui']!.healthcheck!.test.at(-1), `http://127.0.0.1:${services['temporal-ui']!.ports![0]!.split(':').at(-1)}/healthz`);
  });

  it('starts each service only once what it needs is healthy (or, for the setup step, done)', () => {
    assert.deepEqual(services.temporal!.depends_on, { postgres: { condition: 'service_healthy' } });
    assert.deepEqual(services['temporal-ui']!.depends_on, { temporal: { condition: 'service_healthy' } });
    assert.deepEqual(services.setup!.depends_on, {
      postgres: { condition: 'service_healthy' },
      kafka: { condition: 'service_healthy' },
      temporal: { condition: 'service_healthy' },
    });
    for (const name of APP_SERVICES.filter((s) => s !== 'setup')) {
      assert.deepEqual(services[name]!.depends_on, { setup: { condition: 'service_completed_successfully' } }, name);
    }
  });

  it('has a start step that applies the schema, topics and search attributes, then starts the relay shards and the retention schedule, with the CLI’s own commands', () => {
    const [exampleSetup, ...steps] = shellSteps(services.setup!.command!);
    // First the example's setup (the library's `setup` with its key field, then its own tables),
    // from the repository's CLI, which registers it.
    assert.deepEqual(exampleSetup, ['node', '--import', 'tsx', 'tools/cli.ts', 'example-setup']);
    assert.ok(fs.readFileSync(path.join(PROJECT_ROOT, 'tools/cli.ts'), 'utf8').includes('registerExampleSetupCommand(program)'), 'tools/cli.ts registers the example-setup command');
    const invoked = steps.map((argv) => {
      assert.deepEqual(argv.slice(0, 4), ['node', '--import', 'tsx', 'src/cli/main.ts'], `runs the project's CLI: ${argv.join(' ')}`);
      const command = cliSubcommand(program, argv.slice(4));
      assert.ok(command, `src/cli/main.ts has no command ${argv.slice(4).join(' ')}`);
      return `${command.parent === program ? '' : `${command.parent!.name()} `}${command.name()}`;
    });
    assert.deepEqual(invoked, ['relay start', 'retention schedule']);
    assert.equal((services.setup as { restart?: string }).restart, 'no', 'a one-shot step, never restarted in a loop');
  });

  it('sends demo traffic through a CLI command that exists, so events flow once the stack is up', () => {
    const argv = services['demo-traffic']!.command!;
    assert.deepEqual(argv.slice(0, 4), ['node', '--import', 'tsx', 'tools/cli.ts']);
    assert.equal(argv[4], 'traffic');
    assert.ok(fs.readFileSync(path.join(PROJECT_ROOT, 'tools/cli.ts'), 'utf8').includes('registerTrafficCommand(program)'), 'tools/cli.ts registers the traffic command');
  });

  it('runs the workers from the image with the same Node flags as npm run worker:*, on entry points that exist', () => {
    for (const [name, kind] of Object.entries(WORKERS)) {
      const command = services[name]!.command!;
      const entry = command.at(-1)!;
      assert.ok(fs.existsSync(path.join(PROJECT_ROOT, entry)), `${name} runs ${entry}, which must exist`);
      assert.deepEqual(command, ['node', ...WORKER_NODE_ARGS[kind], '--import', 'tsx', entry], name);
    }
  });

  it('gives every app container configuration the code accepts, pointing at the compose services', () => {
    for (const name of APP_SERVICES) {
      const config = loadStackConfig(services[name]!.environment!);
      assert.equal(config.database.local, false, `${name} must use the compose PostgreSQL`);
      assert.equal(config.kafka.local, false);
      assert.equal(config.temporal.local, false);
      const db = new URL(config.database.url);
      assert.deepEqual([db.hostname, db.port, db.username, db.pathname], ['postgres', '5432', services.postgres!.environment!.POSTGRES_USER, `/${services.postgres!.environment!.POSTGRES_DB}`]);
      assert.deepEqual(config.kafka.brokers, [services.kafka!.environment!.KAFKA_ADVERTISED_LISTENERS!.match(/INTERNAL:\/\/([^,]+)/)![1]]);
      assert.equal(config.temporal.address, `temporal:${services.temporal!.ports![0]!.split(':').at(-1)}`);
    }
    assert.equal(services['temporal-ui']!.environment!.TEMPORAL_ADDRESS, 'temporal:7233');
  });

  it("runs the payments example under its own names, not the library's neutral defaults", () => {
    const example = withExampleSettings({});
    for (const name of APP_SERVICES) {
      const config = loadStackConfig(services[name]!.environment!);
      assert.deepEqual([config.kafka.topic, config.kafka.deadLetterTopic, config.kafka.consumerGroup, config.consumer.inboxName], [example.KAFKA_TOPIC, example.KAFKA_DEAD_LETTER_TOPIC, example.CONSUMER_GROUP, example.INBOX_CONSUMER], name);
      assert.deepEqual(config.audit.consumers, [{ consumer: example.INBOX_CONSUMER, eventTypes: ['payment_confirmed'] }], name);
    }
  });

  it('builds the app containers from the Dockerfile and mounts nothing of the host over /app or its node_modules', () => {
    for (const name of APP_SERVICES) {
      assert.equal(services[name]!.build, '.', `${name} is built from the project's Dockerfile`);
      assert.equal(services[name]!.volumes, undefined, `${name} must not mount host folders (a bind mount of . would hide the image's node_modules)`);
    }
    const mounts = Object.values(services).flatMap((s) => (s.volumes ?? []).map(String));
    assert.deepEqual(mounts.filter((m) => /(^|:)\/app(\/|:|$)|node_modules/.test(m)), []);
  });

  it('uses official images only', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue;
      assert.match(service.image!, /^(postgres|apache\/kafka|temporalio\/[a-z-]+|prom\/prometheus|grafana\/grafana):/, name);
    }
  });

  it('lets Prometheus scrape every worker on the ports the code serves metrics on, with the alert rules', () => {
    assert.deepEqual(hostPorts('prometheus'), [defaults.local.prometheusPort]);
    const mounts = services.prometheus!.volumes as string[];
    const prom = parse(fs.readFileSync(path.join(PROJECT_ROOT, mounts.find((m) => m.endsWith('prometheus.yml:ro'))!.split(':')[0]!), 'utf8'));
    const scraped = (prom.scrape_configs as { job_name: string; static_configs: { targets: string[] }[] }[]).map((j) => `${j.job_name}=${j.static_configs[0]!.targets[0]}`).sort();
    const expected = workerTargets(defaults).map((t) => `${t.job}=${t.address.replace('127.0.0.1', `${t.job.split('-')[0]}-worker`)}`).sort();
    assert.deepEqual(scraped, expected);
    for (const name of ['relay-worker', 'consumer-worker', 'retention-worker']) assert.equal(services[name]!.environment!.METRICS_HOST, '0.0.0.0');
    const alerts = parse(fs.readFileSync(path.join(PROJECT_ROOT, 'tools/local-stack/prometheus/alerts.yml'), 'utf8'));
    assert.ok(alerts.groups[0].rules.length >= 5);
  });

  it("gives Grafana a dashboard whose queries use only metrics the workers export", () => {
    const dashboard = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'tools/local-stack/grafana/dashboards/outbox.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
    assert.ok(exprs.length >= 15);
    const ours = new Set(OUTBOX_REGISTRY.getMetricsAsArray().map((m) => m.name));
    for (const expr of exprs) {
      for (const [name] of expr.matchAll(/\b(outbox|inbox|consumer_group|retention)_[a-z_]+/g)) {
        const base = name.replace(/_(bucket|sum|count)$/, '');
        assert.ok(ours.has(base), `${name} in "${expr}" is not a metric the workers export`);
      }
    }
  });
});

describe('Dockerfile', () => {
  const instructions = dockerfileInstructions(read('Dockerfile'));
  const of = (op: string) => instructions.filter((i) => i.op === op).map((i) => i.args);

  it('is a multi-stage build on the official node:20 images', () => {
    const bases = of('FROM');
    assert.ok(bases.length >= 2, 'dependencies in one stage, the runtime in another');
    for (const base of bases) assert.match(base, /^node:20(-[a-z-]+)? AS \w+$/i);
  });

  it('installs dependencies from the lockfile inside the image, never copying the host’s node_modules', () => {
    assert.ok(of('RUN').some((r) => /^npm ci\b/.test(r)), 'npm ci at build time');
    assert.ok(of('COPY').some((c) => /^package\.json package-lock\.json \S+$/.test(c)), 'the lockfile is copied before the sources (a cached dependency layer)');
    const copiesOfModules = of('COPY').filter((c) => c.includes('node_modules'));
    assert.ok(copiesOfModules.length > 0 && copiesOfModules.every((c) => /--from=deps\b/.test(c)), 'node_modules only come from the dependency stage');
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim());
    for (const entry of ['node_modules', '.cache', '.git']) assert.ok(ignored.includes(entry), `.dockerignore lists ${entry}`);
  });

  it('runs as an unprivileged user with a CMD whose entry point exists', () => {
    assert.deepEqual(of('USER'), ['node']);
    const cmd = JSON.parse(of('CMD').at(-1)!) as string[];
    const entry = cmd.find((a) => a.endsWith('.ts'))!;
    assert.ok(fs.existsSync(path.join(PROJECT_ROOT, entry)), `CMD runs ${entry}, which must exist`);
  });
});
