/**
 * Node flags each worker process runs with; `npm run worker:*`, docker-compose.yml and the demo
 * use the same. Each flag applies to every V8 isolate of the process: the main thread and the
 * Temporal SDK's workflow thread, which has its own heap beside it.
 *
 * - `--max-old-space-size`: without a cap V8 on a large machine lets the heap grow lazily to
 *   400–640 MiB RSS under load (docs/relay.md, docs/consumer.md).
 * - `--max-semi-space-size=4` (MB; Node 20's default lets each isolate's young generation grow to
 *   2 × 16 MB and keep it): a young generation sized for a throughput the 2-core machine never
 *   sees. With it, at full load (`npm run bench:memory-soak`, 2-minute runs, 2026-12-03, the
 *   workflow bundles already without the tracing interceptors): relay 281 → 238 MB peak RSS,
 *   consumer 354 → 282 MB, retention 226 → 207 MB, and no fewer events credited per second
 *   (8,492 → 5,463/s between two runs whose load average differed by 2–3: the closed loop
 *   follows the machine; the relay's own throughput side by side: docs/relay.md, Memory).
 */
export const WORKER_NODE_ARGS = {
  relay: ['--max-old-space-size=256', '--max-semi-space-size=4'],
  consumer: ['--max-old-space-size=192', '--max-semi-space-size=4'],
  retention: ['--max-semi-space-size=4'],
} as const;
