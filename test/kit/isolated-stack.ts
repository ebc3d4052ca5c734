import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCAL_STACK_VARIABLES, loadStackConfig, localStackEnv, type StackConfig } from '../../tools/local-stack/stack-config';
import { cachePaths } from '../../tools/local-stack/paths';

// A stack of its own for tests that break or restart services: its own cache folder and ports,
// reusing the main cache's Kafka jars, Temporal CLI binary and workflow bundles so nothing is
// downloaded or built.

const mainCacheDir = loadStackConfig().local.cacheDir;
const mainCache = cachePaths(mainCacheDir);
// Below Linux's ephemeral range (32768-60999), so no outgoing connection's local port can
// hold one of them when a service binds it.
let nextPort = 21_000 + Math.floor(Math.random() * 1000) * 8;

export interface IsolatedStack {
  /** The environment a child process needs to use this stack (and only it). */
  env: Record<string, string>;
  config: StackConfig;
  dir: string;
  remove(): void;
}

export function isolatedStack(opts: { linkKafkaJars?: boolean; shareTemporalCli?: boolean; extraEnv?: Record<string, string> } = {}): IsolatedStack {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-stack-'));
  fs.chmodSync(dir, 0o755); // the PostgreSQL service account must reach its data folder
  const base = (nextPort += 8);
  const env: Record<string, string> = {
    OUTBOX_CACHE_DIR: dir,
    LOCAL_PG_PORT: String(base),
    LOCAL_KAFKA_PORT: String(base + 1),
    LOCAL_KAFKA_CONTROLLER_PORT: String(base + 2),
    LOCAL_TEMPORAL_PORT: String(base + 3),
    LOCAL_TEMPORAL_UI_PORT: String(base + 4),
    ...(opts.shareTemporalCli === false ? {} : { TEMPORAL_CLI: path.join(mainCache.bin, 'temporal') }),
    ...opts.extraEnv,
  };
  if (opts.linkKafkaJars) {
    const paths = cachePaths(dir);
    fs.mkdirSync(path.dirname(paths.kafkaLibs), { recursive: true });
    fs.symlinkSync(mainCache.kafkaLibs, paths.kafkaLibs);
  }
  // The workers' workflow bundles (workers/bundle-workflows.ts) are keyed by the code they hold,
  // not by the stack: sharing the main cache's spares each worker on this stack a webpack run.
  const bundles = path.join(mainCacheDir, 'workflow-bundles');
  fs.mkdirSync(bundles, { recursive: true });
  fs.symlinkSync(bundles, path.join(dir, 'workflow-bundles'));
  // Only this stack's variables: an inherited DATABASE_URL or KAFKA_BROKERS would point elsewhere.
  const inherited = { ...process.env };
  for (const key of LOCAL_STACK_VARIABLES) delete inherited[key];
  return {
    env,
    config: loadStackConfig({ ...inherited, ...env }),
    dir,
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The environment for a child process on this stack, without variables that point elsewhere, and
 * with the services this stack provides named (the library reads only the environment). A worker
 * on the stack's own database logs in as its component's user, as `npm run worker:*` does.
 */
export function childEnv(stack: IsolatedStack, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...stack.env, ...extra };
  for (const key of LOCAL_STACK_VARIABLES) if (!(key in extra) && !(key in stack.env)) delete env[key];
  return localStackEnv(env, { workerLogins: env.DATABASE_URL === undefined });
}
