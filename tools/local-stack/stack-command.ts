import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { loadStackConfig } from './stack-config';
import { cachePaths } from './paths';
import { ensurePrometheus, prometheusStatus, stopStackPrometheus } from './prometheus';
import { SERVICES, stackDown, stackStatus, stackUp, type ServiceName } from './stack';
import { StackError } from './errors';
import { buildSchemaRegistry, ensureSchemaRegistry, localSchemaRegistryUrl, schemaRegistryStatus, stopSchemaRegistry } from './schema-registry';
import { ensureTemporalServerBinaries } from './temporal-server/build';
import { ensureUiServerBinary } from './temporal-cluster/ui-server';
import { toxiproxyServer } from './toxiproxy';

export function registerStackCommands(program: Command) {
  const stack = program.command('stack').description('the local Temporal, Kafka and PostgreSQL services');

  stack
    .command('up')
    .description('start every service that is not running and not configured as external')
    .option('--kafka-brokers <n>', 'local Kafka brokers: 1 (default) or a KRaft cluster of 3 (sets LOCAL_KAFKA_BROKERS; export it for the commands and workers that follow)')
    .option('--with <extras...>', 'also start optional services: prometheus (scrapes the workers\' metrics; docs/observability.md), schema-registry (docs/formats.md)')
    .action(async (opts: { with?: string[]; kafkaBrokers?: string }) => {
      if (opts.kafkaBrokers !== undefined) process.env.LOCAL_KAFKA_BROKERS = opts.kafkaBrokers;
      const config = loadStackConfig();
      const extras = opts.with ?? [];
      const unknown = extras.filter((e) => e !== 'prometheus' && e !== 'schema-registry');
      if (unknown.length) throw new Error(`unknown optional service ${unknown.join(', ')}: they are prometheus and schema-registry`);
      const t0 = Date.now();
      const started: string[] = await stackUp(config, say);
      if (extras.includes('prometheus') && (await ensurePrometheus(config, cachePaths(config.local.cacheDir), say))) started.push('prometheus');
      if (extras.includes('schema-registry')) {
        if (await ensureSchemaRegistry(config, cachePaths(config.local.cacheDir), say)) started.push('schema-registry');
        say(`Schema Registry: SCHEMA_REGISTRY_URL=${localSchemaRegistryUrl(config.local.schemaRegistryPort)}`);
      }
      say(`stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s${started.length ? ` (started: ${started.join(', ')})` : ' (all already running)'}`);
      say(config.temporal.server === 'postgres' ? 'Temporal UI: none with TEMPORAL_SERVER=postgres (docs/temporal-server.md#web-ui)' : `Temporal UI: ${config.temporal.uiUrl}`);
    });

  stack
    .command('build')
    .description("build Temporal's server, its SQL tool and its Web UI server into the cache (what TEMPORAL_SERVER=postgres and cluster run), without starting anything")
    .option('--with <extras...>', 'also build, first and in this order: toxiproxy (the fault tests\' proxy), schema-registry; a test that needs one meanwhile waits for this build instead of racing it')
    .option('--no-temporal', "build only the --with extras, not Temporal's binaries")
    .action(async (opts: { with?: string[]; temporal: boolean }) => {
      const extras = opts.with ?? [];
      const unknown = extras.filter((e) => e !== 'schema-registry' && e !== 'toxiproxy');
      if (unknown.length) throw new Error(`unknown build ${unknown.join(', ')}: the optional ones are toxiproxy and schema-registry`);
      const paths = cachePaths(loadStackConfig().local.cacheDir);
      const t0 = Date.now();
      if (extras.includes('toxiproxy')) {
        await toxiproxyServer(paths, say);
        say(`Toxiproxy ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      }
      if (extras.includes('schema-registry')) {
        await buildSchemaRegistry(paths, say);
        say(`Schema Registry ready after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      }
      if (!opts.temporal) return;
      ensureTemporalServerBinaries(paths, say);
      ensureUiServerBinary(paths, say);
      say(`Temporal's binaries ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    });

  stack
    .command('down')
    .description('stop the local services (all, or the ones named: postgres, kafka, temporal)')
    .argument('[services...]', 'only these services')
    .action(async (only: string[]) => {
      const config = loadStackConfig();
      const unknown = only.filter((s) => !(SERVICES as readonly string[]).includes(s));
      if (unknown.length) throw new StackError(`unknown service ${unknown.join(', ')}: the services are ${SERVICES.join(', ')}`);
      const stopped: string[] = only.length === 0 && (await stopStackPrometheus(cachePaths(config.local.cacheDir))) ? ['prometheus'] : [];
      if (only.length === 0 && (await stopSchemaRegistry(cachePaths(config.local.cacheDir)))) stopped.push('schema-registry');
      stopped.push(...(await stackDown(config, only.length ? (only as ServiceName[]) : SERVICES)));
      say(stopped.length ? `stopped: ${stopped.join(', ')}` : 'nothing was running');
    });

  stack
    .command('status')
    .description('what runs where')
    .action(async () => {
      const config = loadStackConfig();
      const rows: { service: string; mode: string; endpoint: string; pid?: number; listening?: boolean; parts?: { name: string; pid?: number }[] }[] = await stackStatus(config);
      const prometheus = await prometheusStatus(config, cachePaths(config.local.cacheDir));
      if (prometheus.pid || prometheus.listening) rows.push({ service: 'prometheus', mode: 'local', endpoint: `http://127.0.0.1:${config.local.prometheusPort}`, ...prometheus });
      const registry = await schemaRegistryStatus(config, cachePaths(config.local.cacheDir));
      if (registry.pid || registry.listening) rows.push({ service: 'registry', mode: 'local', endpoint: localSchemaRegistryUrl(config.local.schemaRegistryPort), ...registry });
      for (const r of rows) {
        const state = r.mode === 'external' ? 'external (not managed here)' : r.pid ? `running (pid ${r.pid})` : r.listening ? 'port in use by another process' : 'stopped';
        say(`${r.service.padEnd(9)} ${r.endpoint.padEnd(45)} ${state}`);
        for (const part of r.parts ?? []) say(`  ${part.name.padEnd(12)} ${part.pid ? `running (pid ${part.pid})` : 'stopped'}`);
      }
    });

  stack
    .command('run')
    .description('start what is missing, run a command, then stop only what this started')
    .argument('<command...>', 'the command to run, after --')
    .action(async (command: string[]) => {
      const config = loadStackConfig();
      let started: ServiceName[] = [];
      let code: number;
      try {
        const t0 = Date.now();
        started = await stackUp(config, say);
        say(`stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s${started.length ? ` (started: ${started.join(', ')})` : ' (all already running)'}`);
        code = await run(command);
      } finally {
        if (started.length && !process.env.KEEP_STACK) say(`stopping what this run started: ${(await stackDown(config, started, { temporal: 'configured' })).join(', ')}`);
      }
      process.exitCode = code;
    });
}

function run(command: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit' });
    // Ctrl-C reaches the child through the terminal; we outlive it to stop the stack.
    process.on('SIGINT', () => undefined);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

function say(message: string) {
  process.stdout.write(`[stack] ${message}\n`);
}
