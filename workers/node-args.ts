/**
 * Node flags each worker process runs with; `npm run worker:*`, docker-compose.yml and the demo
 * use the same. Each flag applies to every V8 isolate of the process: the main thread and the
 * Temporal SDK's workflow thread, which has its own heap beside it.
 *
 * - `--max-old-space-size`: without a cap V8 on a large machine lets the heap grow lazily to
 *   400–640 MiB RSS under load (docs/measurements/relay-log.md, consumer-log.md).
 * - `--max-semi-space-size` (MB): Node 20's default lets each isolate's young generation grow to
 *   2 × 16 MB and keeps it, sized for a throughput the 2-core machine never sees. 4 MB lowers every
 *   worker's peak RSS at full load with credited events per second within the machine's noise; the
 *   consumer, the largest, gets 2 MB, lower again at the same rate. What it costs shows only with a
 *   preloaded backlog (`npm run bench:consumer`), a few percent of credits per second together with
 *   the other memory changes of the time (docs/measurements/relay-log.md, "Figures behind code comments";
 *   docs/measurements/relay-log.md, "Memory of the three workers").
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
 *   SDK's native core, the workflow thread), and the native memory beside the V8 heaps is mostly
 *   that. Two arenas lower every worker's peak RSS at full load, credited events per second not
 *   lower (docs/measurements/relay-log.md, "Figures behind code comments").
 * - `MALLOC_MMAP_THRESHOLD_` and `MALLOC_TRIM_THRESHOLD_` at 128 KiB: glibc serves blocks of at
 *   least 128 KiB with mmap and unmaps them when freed, but after the first such free it raises
 *   that threshold up to the block's size, so from then on a fetch's few MiB (kafkajs's response
 *   buffers, pg's result buffers) come from the arenas, which keep the pages after free. Setting
 *   the threshold fixes it at the default; the trim threshold gives freed arena tops back at the
 *   same size: a lower peak RSS for the same credits per second (docs/measurements/relay-log.md, "Figures behind code comments").
 */
export const WORKER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' };
