import { spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { isNodeLine, nodeBinary, NODE_WHEELS } from '../local-stack/node-release';
import { cachePaths } from '../local-stack/paths';
import { loadStackConfig } from '../local-stack/stack-config';
import { LANES } from './test-lanes-plan';

// `npm run test:node -- 22` (or 24): the unit tests and a core subset of the integration and
// end-to-end tests on that Node line, provisioned into the cache from its sha256-pinned PyPI
// wheel (tools/local-stack/node-release.ts); the machine's own line (`-- 20` on a Node 20 machine)
// runs on the machine's node. `npm run test:node -- 24 test/unit/foo.unit.test.ts` runs the given
// files instead; `npm run test:node -- 24 --all` runs the whole suite there in its two lanes, as
// `npm test` does on the machine's own Node (CI's full run, .ci/run); with TEMPORAL_SERVER=cluster,
// on Temporal's multi-process cluster and with the cluster's wider subset.
// Everything runs under that Node: the stack's CLI, mocha, and every process a test spawns
// (its bin directory comes first on PATH).

/**
 * What a new Node line is most likely to break, within CI's budget (about 3 minutes a line): every
 * unit test; the migrations and enqueue on PostgreSQL; tracing (async context); the pipeline end to
 * end (relay and consumer workers on Temporal's native bridge, Kafka); and the README's example.
 * The packed package's ESM and CommonJS imports run in the full suite's line only: packing and
 * installing it costs about two minutes a line, which CI's 30 minutes do not leave.
 */
export const CORE_SUBSET = [
  'test/unit/**/*.test.ts',
  'test/integration/migrate.integration.test.ts',
  'test/integration/enqueue.integration.test.ts',
  'test/integration/traces.integration.test.ts',
  'test/e2e/pipeline.e2e.test.ts',
  'test/e2e/readme-example.e2e.test.ts',
];

/** The whole suite: the files of `npm test`'s lanes (tools/scripts/test-lanes-plan.ts), here in one mocha process. */
export const WHOLE_SUITE = LANES.flatMap((lane) => lane.specs);

/** What to run for the arguments after the Node line: the given files, the whole suite, or the core. */
export function testFilesFor(args: string[], core: readonly string[] = CORE_SUBSET): string[] | undefined {
  const all = args.includes('--all');
  const files = args.filter((a) => a !== '--all');
  if (all && files.length > 0) return undefined;
  if (all) return WHOLE_SUITE;
  return files.length > 0 ? files : [...core];
}

/**
 * On Temporal's cluster (TEMPORAL_SERVER=cluster), the core subset and the rest of what depends on
 * Temporal's behaviour: the relay workflow itself and a worker replaying it after a kill -9, the
 * consumer after a kill -9, retention and audit schedules, doctor and `inbox find` reading SQL
 * visibility, the Temporal CLI commands the docs write, and the cluster's own shape and faults.
 */
export const CLUSTER_CORE_SUBSET = [
  ...CORE_SUBSET,
  'test/integration/relay.integration.test.ts',
  'test/integration/consumer-crash.integration.test.ts',
  'test/integration/retention-schedule.integration.test.ts',
  'test/integration/audit.integration.test.ts',
  'test/integration/doctor.integration.test.ts',
  'test/integration/inbox-find.integration.test.ts',
  'test/e2e/relay-cli.e2e.test.ts',
  'test/e2e/relay-crash.e2e.test.ts',
  'test/e2e/temporal-cluster.e2e.test.ts',
  // The Web UI: with TEMPORAL_SERVER=cluster, the cluster's own UI server in front of the frontends.
  'test/e2e/temporal-ui.e2e.test.ts',
];

/** The major version of the Node running this script: its line runs without a wheel. */
export function ownNodeLine(version: string = process.versions.node): string {
  return version.split('.')[0]!;
}

async function main() {
  const [line, ...rest] = process.argv.slice(2);
  const config = loadStackConfig();
  const files = testFilesFor(rest, config.temporal.server === 'cluster' ? CLUSTER_CORE_SUBSET : CORE_SUBSET);
  const own = ownNodeLine();
  if (!line || !(isNodeLine(line) || line === own) || !files) {
    process.stderr.write(`usage: npm run test:node -- <${[own, ...Object.keys(NODE_WHEELS)].join('|')}> [--all | test files…]\n`);
    process.exit(2);
  }
  const node = isNodeLine(line) && line !== own ? nodeBinary(line, cachePaths(config.local.cacheDir), (m) => process.stdout.write(`[node] ${m}\n`)) : process.execPath;
  process.stdout.write(`[node] running on ${node} (${isNodeLine(line) && line !== own ? `v${NODE_WHEELS[line].version}` : `${process.version}, the machine's own`})\n`);
  const bin = (pkg: string, file: string) => path.join(PROJECT_ROOT, 'node_modules', pkg, file);
  // The whole suite in `npm test`'s two lanes (tools/scripts/test-lanes.ts), anything else in one mocha.
  // Through tsx's loader, not its CLI, as every npm script runs (test/unit/npm-scripts-signals.unit.test.ts says why).
  const tests = files === WHOLE_SUITE ? ['--import', 'tsx', path.join(PROJECT_ROOT, 'tools', 'scripts', 'test-lanes.ts')] : [bin('mocha', 'bin/mocha.js'), ...files];
  const args = ['--import', 'tsx', path.join(PROJECT_ROOT, 'tools', 'cli.ts'), 'stack', 'run', '--', node, ...tests];
  const child = spawn(node, args, { cwd: PROJECT_ROOT, stdio: 'inherit', env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` } });
  // Ctrl-C reaches the child through the terminal; it stops the stack it started.
  process.on('SIGINT', () => undefined);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
