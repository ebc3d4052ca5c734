/**
 * The benchmarks `npm run bench` runs, in this order: each one's entry file, and the environment
 * of its quick (CI smoke) and full sizes. A benchmark whose file does not exist yet is skipped
 * with a line that says so.
 */
export interface SuiteBenchmark {
  name: string;
  /** Entry file, relative to the project root. */
  file: string;
  /** Its own npm script, for the report. */
  npmScript: string;
  /** The results file it writes (bench/results/<resultFile>.json). */
  resultFile: string;
  /** Sizes for the quick mode: seconds per benchmark, enough to show it runs end to end. */
  quickEnv: Record<string, string>;
  /** Sizes for the full mode; empty = the benchmark's own defaults (the committed results). */
  fullEnv: Record<string, string>;
}

export const SUITE: SuiteBenchmark[] = [
  { name: 'relay', resultFile: 'relay', file: 'tools/bench/relay.bench.ts', npmScript: 'bench:relay', quickEnv: { BENCH_QUICK: '1', BENCH_EVENTS: '5000' }, fullEnv: {} },
  { name: 'consumer', resultFile: 'consumer', file: 'tools/bench/consumer.bench.ts', npmScript: 'bench:consumer', quickEnv: { BENCH_EVENTS: '5000', BENCH_SECONDS: '3' }, fullEnv: {} },
  { name: 'pipeline', resultFile: 'pipeline', file: 'tools/bench/pipeline.bench.ts', npmScript: 'bench:pipeline', quickEnv: { SECONDS: '3' }, fullEnv: {} },
  { name: 'memory soak', resultFile: 'memory-soak', file: 'tools/bench/memory-soak.ts', npmScript: 'bench:memory-soak', quickEnv: { BENCH_MINUTES: '2' }, fullEnv: {} },
  { name: 'peer', resultFile: 'peer', file: 'tools/bench/peer.bench.ts', npmScript: 'bench:peer', quickEnv: { BENCH_QUICK: '1' }, fullEnv: {} },
  { name: 'scaling', resultFile: 'scaling', file: 'tools/bench/scaling.bench.ts', npmScript: 'bench:scaling', quickEnv: { BENCH_QUICK: '1' }, fullEnv: {} },
  { name: 'consumer scaling', resultFile: 'consumer-scaling', file: 'tools/bench/consumer-scaling.bench.ts', npmScript: 'bench:consumer-scaling', quickEnv: { BENCH_QUICK: '1' }, fullEnv: {} },
  { name: 'cross-zone', resultFile: 'cross-zone', file: 'tools/bench/cross-zone.bench.ts', npmScript: 'bench:zones', quickEnv: { BENCH_QUICK: '1', BENCH_EVENTS: '5000' }, fullEnv: {} },
];
