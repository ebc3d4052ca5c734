import fs from 'node:fs';
import path from 'node:path';
import type { StackConfig as Config } from './stack-config';
import { PROJECT_ROOT } from '../../src/config/env';
import { metricsPorts, WORKER_KINDS } from '../../src/observability/worker-ports';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';
import { hasCommand } from './toolchain';

// Prometheus for the local stack (opt-in: `stack up --with prometheus`): the machine's own
// binary (Debian package `prometheus`), its configuration generated from the workers' metrics
// ports, data and log in the cache folder. Tests start their own with startPrometheus.

export const PROMETHEUS_SERVICE = 'prometheus';
export const ALERT_RULES_FILE = path.join(PROJECT_ROOT, 'tools', 'local-stack', 'prometheus', 'alerts.yml');

export interface ScrapeTarget {
  job: string;
  address: string;
}

/** Our /metrics and the Temporal SDK's endpoint of each worker, as scrape jobs. */
export function workerTargets(config: Config, host = '127.0.0.1'): ScrapeTarget[] {
  return WORKER_KINDS.flatMap((kind) => {
    const ports = metricsPorts(config, kind);
    return ports ? [{ job: kind, address: `${host}:${ports.app}` }, { job: `${kind}-temporal-sdk`, address: `${host}:${ports.temporalSdk}` }] : [];
  });
}

export function prometheusConfigText(targets: ScrapeTarget[], scrapeIntervalS: number, ruleFiles: string[]): string {
  const lines = ['global:', `  scrape_interval: ${scrapeIntervalS}s`, `  evaluation_interval: ${scrapeIntervalS}s`, 'rule_files:'];
  for (const f of ruleFiles) lines.push(`  - ${JSON.stringify(f)}`);
  lines.push('scrape_configs:');
  for (const t of targets) lines.push(`  - job_name: ${JSON.stringify(t.job)}`, '    static_configs:', `      - targets: [${JSON.stringify(t.address)}]`);
  return `${lines.join('\n')}\n`;
}

export interface PrometheusSpec {
  /** Folder for its configuration, data, PID file and log. */
  dir: string;
  port: number;
  targets: ScrapeTarget[];
  scrapeIntervalS: number;
}

/** Writes the configuration and starts a Prometheus daemon; resolves when it answers /-/ready. */
export async function startPrometheus(spec: PrometheusSpec): Promise<number> {
  if (!hasCommand('prometheus')) {
    throw new StackError('Prometheus is not installed: apt-get install prometheus (Debian), or put a `prometheus` binary on PATH');
  }
  if (await isListening(spec.port)) {
    throw new StackError(`port ${spec.port} is taken by a process that is not this project's Prometheus: stop it, or set LOCAL_PROMETHEUS_PORT`);
  }
  fs.mkdirSync(path.join(spec.dir, 'data'), { recursive: true });
  const configFile = path.join(spec.dir, 'prometheus.yml');
  fs.writeFileSync(configFile, prometheusConfigText(spec.targets, spec.scrapeIntervalS, [ALERT_RULES_FILE]));
  const logFile = path.join(spec.dir, 'prometheus.log');
  const pid = startDaemon({
    name: PROMETHEUS_SERVICE,
    command: 'prometheus',
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(spec.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${spec.port}`,
      '--storage.tsdb.retention.time=7d',
    ],
    runDir: spec.dir,
    logFile,
  });
  await waitUntil(`Prometheus on port ${spec.port}`, async () => (await fetch(`http://127.0.0.1:${spec.port}/-/ready`)).ok, { timeoutMs: 30_000, pid, logFile });
  return pid;
}

export function stopPrometheus(dir: string): Promise<boolean> {
  return stopDaemon(dir, PROMETHEUS_SERVICE);
}

function stackDir(paths: CachePaths): string {
  return path.join(paths.root, 'prometheus');
}

/** The local stack's Prometheus: started when not running; true when this call started it. */
export async function ensurePrometheus(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const dir = stackDir(paths);
  if (runningPid(dir, PROMETHEUS_SERVICE) !== undefined) return false;
  const targets = workerTargets(config);
  if (targets.length === 0) log('METRICS_PORT_BASE=0: the workers serve no metrics, so Prometheus has nothing to scrape');
  await startPrometheus({ dir, port: config.local.prometheusPort, targets, scrapeIntervalS: 15 });
  log(`Prometheus: http://127.0.0.1:${config.local.prometheusPort} (scraping ${targets.map((t) => t.address).join(', ')})`);
  return true;
}

export async function prometheusStatus(config: Config, paths: CachePaths) {
  return { pid: runningPid(stackDir(paths), PROMETHEUS_SERVICE), listening: await isListening(config.local.prometheusPort) };
}

export function stopStackPrometheus(paths: CachePaths): Promise<boolean> {
  return stopPrometheus(stackDir(paths));
}
