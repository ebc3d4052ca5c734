/**
 * Node flags each worker process runs with; `npm run worker:*`, docker-compose.yml and the demo
 * use the same. Each flag applies to every V8 isolate of the process: the main thread and the
 * Temporal SDK's workflow thread, which has its own heap beside it.
 *
 * - `--max-old-space-size`: without a cap V8 on a large machine lets the heap grow lazily to
 *   400–640 MiB RSS under load (docs/measurements/relay-log.md, consumer-log.md).
 * - `--max-semi-space-size` (MB): Node 20's default lets each isolate's young generation grow to
 *   2 × 16 MB and keeps it, sized for a throughput the 2-core machine never sees. At full load
 *   (`npm run bench:memory-soak`, 2-minute runs, 2026-12-03, bundles already without the tracing
 *   interceptors) 4 MB took the relay 281 → 238 MB peak RSS, the consumer 354 → 282 MB, retention
 *   226 → 207 MB, credited events per second within the machine's noise
 *   (docs/measurements/relay-log.md, "Memory of the three workers").
 *   The consumer, the largest, gets 2 MB: with 2 MB it measured 12 MB less again (270 MB, with a
 *   128 MB old space in that run) at the same 5,459 credited/s as 5,463/s with 4 MB. The cost
 *   shows in `npm run bench:consumer` (preloaded backlog, one worker): with these flags 9.5–10.6k
 *   credits/s against 10.8–12.2k for the code of 61fad18 (before them and the other changes of
 *   that stop), run alternately; which change costs what is not measured
 *   (docs/measurements/consumer-log.md).
 */
export const WORKER_NODE_ARGS = {
  relay: ['--max-old-space-size=256', '--max-semi-space-size=4'],
  consumer: ['--max-old-space-size=192', '--max-semi-space-size=2'],
  retention: ['--max-semi-space-size=4'],
} as const;

/**
 * Environment each worker process starts with, beside its Node flags (glibc reads it only at
 * process start, so it cannot be set from inside).
 *
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates its own malloc arena, up to 8 per
 *   core, and keeps what they once held. A worker has many such threads (libuv's pool, V8's, the
 *   SDK's native core, the workflow thread), and the native memory beside the V8 heaps (≈ 80 MiB
 *   in the consumer at full load) is mostly that. Two arenas, measured at full load
 *   (`npm run bench:memory-soak`, 2-minute runs, 2026-12-03, before the other changes here): relay
 *   325 → 279 MB peak RSS, consumer 370 → 341 MB, retention levelled 225 → 190 MB; credited events
 *   per second not lower (3,467 → 4,283/s).
 * - `MALLOC_MMAP_THRESHOLD_` and `MALLOC_TRIM_THRESHOLD_` at 128 KiB: glibc serves blocks of at
 *   least 128 KiB with mmap and unmaps them when freed, but after the first such free it raises
 *   that threshold up to the block's size, so from then on a fetch's few MiB (kafkajs's response
 *   buffers, pg's result buffers) come from the arenas, which keep the pages after free. Setting
 *   the threshold fixes it at the default; the trim threshold gives freed arena tops back at the
 *   same size. Measured in `npm run bench:consumer` quick runs (`BENCH_SECONDS=5`, alternated,
 *   2026-12-05): worker peak RSS 255–265 against 280–289 MiB, credits per second the same
 *   (31,487–33,422 against 30,369–33,186).
 */
export const WORKER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' };
