import { ConfigError, loadConfig, type Config } from '../src/config/env';
import { createLogger, type Logger } from '../src/config/logger';

/**
 * A bundled worker process's entry point: build the configuration from the environment (refusing
 * to start, with one clear message and exit code 1, when it is invalid — e.g. an inbox horizon
 * shorter than Kafka can redeliver), run until SIGINT/SIGTERM, and exit non-zero on failure so a
 * supervisor restarts the process. The process runs nothing else, so it takes what a library
 * call leaves alone: the signals, the Temporal runtime, and the lean kafkajs encoder unless
 * KAFKAJS_LEAN_ENCODER=false, and errors nothing handled (logged, then exit 1).
 */
export function runWorkerMain(name: string, run: (config: Config, process: { signal: AbortSignal; installTemporalRuntime: true; logger: Logger }) => Promise<void>): void {
  let config: Config;
  try {
    config = loadConfig({ KAFKAJS_LEAN_ENCODER: 'true', ...process.env });
  } catch (err) {
    process.stderr.write(`${name} refused to start: ${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(1);
  }
  // The worker logs through this logger (`relay worker` logs as relay-worker), and so does its
  // last word: a failure, or an error nothing handled, goes to the worker's log with the error
  // (pino writes it synchronously) and to stderr, then the process exits 1.
  const logger = createLogger(name.replace(/ \(.*\)$/, '').replace(/\s+/g, '-'), config.logLevel);
  const exitOn = (what: string) => (err: unknown) => {
    logger.error({ err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, `${name} ${what}: exiting`);
    process.stderr.write(`${name} ${what}: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  };
  process.on('unhandledRejection', exitOn('had a promise rejection nothing handled'));
  process.on('uncaughtException', exitOn('had an error nothing caught'));
  run(config, { signal: shutdownSignal(), installTemporalRuntime: true, logger }).then(() => process.exit(0), exitOn('failed'));
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
