import fs from 'node:fs';

/** One sample of a worker process's resident memory (/proc/PID/status, Linux). */
export interface RssSample {
  worker: string;
  /** Seconds since the loaded period started. */
  seconds: number;
  /** VmRSS: resident now. */
  rssKiB: number;
  /** VmHWM: the highest resident so far. */
  hwmKiB: number;
}

/** A process's VmRSS and VmHWM in KiB; undefined when it is gone (or not Linux). */
export function procStatusKiB(pid: number): { VmRSS: number; VmHWM: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]);
    const rss = field('VmRSS');
    const hwm = field('VmHWM');
    return Number.isFinite(rss) && Number.isFinite(hwm) ? { VmRSS: rss, VmHWM: hwm } : undefined;
  } catch {
    return undefined;
  }
}

export interface RssSummary {
  worker: string;
  samples: number;
  /** The process's own high-water mark at the last sample (catches peaks between samples). */
  peakKiB: number;
  /** The highest sampled VmRSS. */
  maxSampledKiB: number;
  /** Median VmRSS of the last third of the loaded period: where the worker levelled off. */
  levelledKiB: number;
  /** [min, max] VmRSS in the last and the first third of the loaded period: drift shows as a gap. */
  lastThirdKiB: [number, number];
  firstThirdKiB: [number, number];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const range = (xs: number[]): [number, number] => (xs.length ? [Math.min(...xs), Math.max(...xs)] : [NaN, NaN]);

/** Peak, levelled and drift figures of one worker's samples over a loaded period of `loadedSeconds`. */
export function summariseRss(worker: string, samples: RssSample[], loadedSeconds: number): RssSummary {
  if (samples.length === 0) throw new Error(`no memory samples of the ${worker} worker`);
  const loaded = samples.filter((s) => s.seconds <= loadedSeconds);
  const lastThird = loaded.filter((s) => s.seconds >= (loadedSeconds * 2) / 3).map((s) => s.rssKiB);
  const firstThird = loaded.filter((s) => s.seconds < loadedSeconds / 3).map((s) => s.rssKiB);
  return {
    worker,
    samples: samples.length,
    peakKiB: Math.max(...samples.map((s) => s.hwmKiB)),
    maxSampledKiB: Math.max(...samples.map((s) => s.rssKiB)),
    levelledKiB: median(lastThird.length ? lastThird : loaded.map((s) => s.rssKiB)),
    lastThirdKiB: range(lastThird),
    firstThirdKiB: range(firstThird),
  };
}
