import { ConfigError, loadConfig, type Config } from '../src/config/env';

/**
 * A bundled worker process's entry point: build the configuration from the environment (refusing
 * to start, with one clear message and exit code 1, when it is invalid — e.g. an inbox horizon
 * shorter than Kafka can redeliver), run until SIGINT/SIGTERM, and exit non-zero on failure so a
 * supervisor restarts the process. The process runs nothing else, so it takes what a library
 * call leaves alone: the signals, the Temporal runtime, and the lean kafkajs encoder unless
 * KAFKAJS_LEAN_ENCODER=false.
 */
export function runWorkerMain(name: string, run: (config: Config, process: { signal: AbortSignal; installTemporalRuntime: true }) => Promise<void>): void {
  let config: Config;
  try {
    config = loadConfig({ KAFKAJS_LEAN_ENCODER: 'true', ...process.env });
  } catch (err) {
    process.stderr.write(`${name} refused to start: ${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(1);
  }
  run(config, { signal: shutdownSignal(), installTemporalRuntime: true }).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${name} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}

/**
 * Aborts on the first SIGINT or SIGTERM so workers drain (finish their current activity) instead
 * of dying mid-batch; a second signal exits at once.
 */
export function shutdownSignal(): AbortSignal {
  const controller = new AbortController();
  const handler = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return controller.signal;
}
