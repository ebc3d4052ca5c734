/**
 * A benchmark's entry point: exits 0 when `main` resolves, or prints the error and exits 1.
 * Exiting explicitly, so that a client left open (Kafka, Temporal, a pool) cannot keep the
 * process alive after the report is written.
 */
export function runBenchmark(main: () => Promise<void>): void {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
