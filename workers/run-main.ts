import { ConfigError, loadConfig, type Config } from '../src/config/env';

/**
 * A worker process's entry point: build the configuration (refusing to start, with one clear
 * message and exit code 1, when it is invalid — e.g. an inbox horizon shorter than Kafka can
 * redeliver), run, and exit non-zero on failure so a supervisor restarts the process.
 */
export function runWorkerMain(name: string, run: (config: Config) => Promise<void>): void {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${name} refused to start: ${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(1);
  }
  run(config).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${name} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
