// The figures bench:temporal-servers puts side by side, read from the JSON each benchmark saves
// (bench:relay, bench:pipeline, bench:memory-soak): what each one's own summary leads with.

export type TemporalServerKind = 'dev' | 'cluster';
export type BenchKind = 'relay' | 'pipeline' | 'memory-soak';

export interface Figure {
  bench: BenchKind;
  /** Stable key in the JSON. */
  key: string;
  label: string;
  unit: string;
  /** Whether a larger value is better (for the table's ratio column). */
  higherIsBetter: boolean;
  read(result: unknown): number | undefined;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
/** A field of a benchmark's saved `results`, by path (each benchmark's JSON is its own shape). */
const at = (r: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), (r as { results?: unknown }).results);
const peakMB = (worker: string) => (r: unknown) => num((at(r, 'summary') as { worker: string; peakMB: number }[] | undefined)?.find((s) => s.worker === worker)?.peakMB);

export const FIGURES: Figure[] = [
  { bench: 'relay', key: 'relayEventsPerSecond', label: 'relay throughput (session mode)', unit: 'events/s', higherIsBetter: true, read: (r) => num(at(r, 'throughputSummary', 'byMode', 'session', 'median')) },
  { bench: 'relay', key: 'relayLatencyP50Ms', label: 'relay commit → on Kafka p50 at 1,000/s', unit: 'ms', higherIsBetter: false, read: (r) => num(at(r, 'latencySummary', 'session', 'p50MsMedian')) },
  { bench: 'relay', key: 'relayLatencyP99Ms', label: 'relay commit → on Kafka p99 at 1,000/s', unit: 'ms', higherIsBetter: false, read: (r) => num(at(r, 'latencySummary', 'session', 'p99MsMedian')) },
  { bench: 'pipeline', key: 'pipelineP50Ms', label: 'pipeline commit → credited p50 at 1,000/s', unit: 'ms', higherIsBetter: false, read: (r) => num(at(r, 'p50Ms')) },
  { bench: 'pipeline', key: 'pipelineP99Ms', label: 'pipeline commit → credited p99 at 1,000/s', unit: 'ms', higherIsBetter: false, read: (r) => num(at(r, 'p99Ms')) },
  { bench: 'pipeline', key: 'pipelineOnKafkaP99Ms', label: 'pipeline commit → on Kafka p99', unit: 'ms', higherIsBetter: false, read: (r) => num(at(r, 'onKafka', 'p99MsMedian')) },
  { bench: 'memory-soak', key: 'soakCreditedPerSecond', label: 'memory soak: credited under full load', unit: 'events/s', higherIsBetter: true, read: (r) => num(at(r, 'eventsPerSecondUnderLoad')) },
  { bench: 'memory-soak', key: 'soakRelayPeakMB', label: 'memory soak: relay worker peak RSS', unit: 'MB', higherIsBetter: false, read: peakMB('relay') },
  { bench: 'memory-soak', key: 'soakConsumerPeakMB', label: 'memory soak: consumer worker peak RSS', unit: 'MB', higherIsBetter: false, read: peakMB('consumer') },
  { bench: 'memory-soak', key: 'soakRetentionPeakMB', label: 'memory soak: retention worker peak RSS', unit: 'MB', higherIsBetter: false, read: peakMB('retention') },
  { bench: 'memory-soak', key: 'soakDuplicatesOnTopic', label: 'memory soak: re-sent copies on the topic', unit: 'messages', higherIsBetter: false, read: (r) => num(at(r, 'checks', 'duplicatesOnTopic')) },
];

/** Whether a benchmark's own end-to-end check held (balances exact, each event applied once). */
export function checkHeld(bench: BenchKind, result: unknown): boolean | undefined {
  if (bench === 'pipeline') return at(result, 'balancesExact') as boolean | undefined;
  if (bench === 'memory-soak') return at(result, 'exact') as boolean | undefined;
  return undefined;
}

export interface RunRecord {
  server: TemporalServerKind;
  round: number;
  bench: BenchKind;
  seconds: number;
  exitCode: number;
  resultFile?: string;
  figures: Record<string, number>;
  checkHeld?: boolean;
}

export interface FigureRow {
  key: string;
  label: string;
  unit: string;
  dev: { median?: number; runs: number[] };
  cluster: { median?: number; runs: number[] };
  /** cluster ÷ dev of the medians. */
  clusterOverDev?: number;
}

/** The middle value, or the mean of the two middle ones (two rounds give two values per figure). */
function middle(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Medians over the rounds, per server, of every figure. */
export function figureRows(runs: RunRecord[]): FigureRow[] {
  const side = (server: TemporalServerKind, key: string) => {
    const values = runs.filter((r) => r.server === server && r.figures[key] !== undefined).map((r) => r.figures[key]!);
    return { median: values.length > 0 ? middle(values) : undefined, runs: values };
  };
  return FIGURES.map((f) => {
    const dev = side('dev', f.key);
    const cluster = side('cluster', f.key);
    const ratio = dev.median && cluster.median !== undefined ? +(cluster.median / dev.median).toFixed(2) : undefined;
    return { key: f.key, label: f.label, unit: f.unit, dev, cluster, clusterOverDev: ratio };
  });
}

/** The table printed at the end: one line per figure, dev and cluster medians and their ratio. */
export function formatTable(rows: FigureRow[]): string {
  const cell = (v: number | undefined) => (v === undefined ? '—' : v.toLocaleString('en', { maximumFractionDigits: 1 }));
  const lines = [['figure', 'unit', 'dev server', 'cluster', 'cluster ÷ dev'], ...rows.map((r) => [r.label, r.unit, cell(r.dev.median), cell(r.cluster.median), r.clusterOverDev === undefined ? '—' : `${r.clusterOverDev}×`])];
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines.map((l) => l.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}
