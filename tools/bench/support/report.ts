import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import * as vl from 'vega-lite';
import { PROJECT_ROOT } from '../../../src/config/env';

/** Where results go; BENCH_RESULTS_DIR redirects them (the suite's quick mode, so a smoke run
 * never overwrites the committed full-size results). */
export const RESULTS_DIR = path.resolve(process.env.BENCH_RESULTS_DIR ?? path.join(PROJECT_ROOT, 'tools', 'bench', 'results'));

/** What a reader needs to reproduce or discount a figure: the machine and the software on it. */
export function machineInfo() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    // Which Temporal the local stack ran (TEMPORAL_SERVER: dev, postgres, cluster), so figures on each sit side by side.
    temporalServer: process.env.TEMPORAL_SERVER || 'dev',
    platform: `${os.platform()} ${os.release()}`,
    at: new Date().toISOString(),
  };
}

export interface BenchmarkReport {
  name: string;
  command: string;
  settings: Record<string, unknown>;
  results: unknown;
  /** A Vega-Lite spec; rendered to SVG and PNG beside the JSON. */
  chart?: vl.TopLevelSpec;
}

/**
 * The command as run: the variables with these prefixes that were set (BENCH_ for the benchmark's
 * own knobs; a component's prefix, e.g. CONSUMER_, for settings its workers inherit from this
 * process), then the npm script. Saved with the results, so each JSON says how to reproduce it.
 */
export function commandLine(script: string, prefixes: readonly string[] = ['BENCH_']): string {
  const vars = Object.entries(process.env).filter(([k, v]) => v && prefixes.some((p) => k.startsWith(p)));
  return [...vars.map(([k, v]) => `${k}=${JSON.stringify(v)}`), `npm run ${script}`].join(' ');
}

/** Writes bench/results/<name>.json (+ .svg and .png when a chart is given); returns the paths. */
export async function saveBenchmark(report: BenchmarkReport): Promise<string[]> {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const base = path.join(RESULTS_DIR, report.name);
  const written = [`${base}.json`];
  fs.writeFileSync(`${base}.json`, JSON.stringify({ ...report, chart: undefined, machine: machineInfo() }, null, 2) + '\n');
  if (report.chart) {
    const view = new vega.View(vega.parse(vl.compile(report.chart).spec), { renderer: 'none' });
    const svg = await view.toSVG();
    fs.writeFileSync(`${base}.svg`, svg);
    fs.writeFileSync(`${base}.png`, new Resvg(svg, { background: 'white', fitTo: { mode: 'width', value: 1000 } }).render().asPng());
    written.push(`${base}.svg`, `${base}.png`);
  }
  return written;
}

/** Percentile of already sorted numbers (nearest-rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}
