import type { Logger } from '../src/config/logger';
import type { Config } from '../src/config/env';
import { AskedAhead } from './asked-ahead';
import { watchLinks, type LinkProbe } from './link-health';

/** What a worker runs while its links are healthy: built and joined by `start`, drained by `shutdown`. */
export interface SteppableWork {
  run(): Promise<void>;
  /** `stepAside`: the work ends because a link is down (`failingLink`; what needs that link is not waited for). */
  shutdown(stepAside?: boolean, failingLink?: string): Promise<void>;
}

export interface StepAsideOptions<T extends SteppableWork> {
  /** Builds the work and joins (the relay worker registry, the consumer group); called again after every heal. */
  start(): Promise<T>;
  /** Called once the work is started, `first` only the first time. */
  onStarted?(work: T, first: boolean): void;
  probes: Record<string, LinkProbe>;
  health: Config['links']['health'];
  logger: Logger;
  /**
   * Whether another worker can take the work over (default: yes), given the links failing. A
   * worker alone, or when none else is there, stays: leaving would hand its work to nobody and
   * cost a rejoin afterwards. Asked at every failed probe round before the step-aside, each time
   * bounded by the health check's timeout (workers/asked-ahead.ts).
   */
  othersCanTakeOver?(failing: readonly string[]): Promise<boolean>;
  /** Told after every probe round which links failed it (none: all answered). */
  onRound?(failing: readonly string[]): void;
  /** The worker's own stop (SIGTERM): ends the work and returns. */
  stopped: AbortSignal;
}

/**
 * Runs `start()`'s work while every link answers its health check, and gets out of the way while
 * one does not (docs/guarantees.md#stepping-aside): the work is shut down (it leaves the relay
 * workers or the consumer group and stops polling Temporal, so healthy workers take over), and
 * started anew by itself once every link answers again. Returns when `stopped` aborts.
 */
export async function runSteppingAside<T extends SteppableWork>(opts: StepAsideOptions<T>): Promise<void> {
  const watch = new AbortController();
  let current: T | undefined;
  let healthy = true;
  let wake: (() => void) | undefined;
  const onStop = () => {
    void current?.shutdown();
    wake?.();
  };
  opts.stopped.addEventListener('abort', onStop, { once: true });
  const others = opts.othersCanTakeOver ? new AskedAhead(opts.othersCanTakeOver, opts.health.timeoutMs) : undefined;
  const watching = watchLinks(
    opts.probes,
    opts.health,
    {
      down: async (link, reason) => {
        if (others && !(await others.othersCanTakeOver([link]))) {
          opts.logger.warn({ link, reason }, 'a link failed its health check, and no other worker is there to take over: staying');
          return false;
        }
        healthy = false;
        opts.logger.warn({ link, reason }, 'a link failed its health check: stepping aside until it answers again');
        await current?.shutdown(true, link);
        return true;
      },
      up: () => {
        healthy = true;
        opts.logger.info('every link answers again: rejoining');
        wake?.();
      },
      round: (failing) => {
        if (healthy) others?.round(failing);
        opts.onRound?.(failing);
      },
    },
    watch.signal,
  );
  let first = true;
  try {
    while (!opts.stopped.aborted) {
      if (!healthy) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      try {
        current = await opts.start();
      } catch (err) {
        // Joining failed because a link went down meanwhile: wait for the heal like any step-aside.
        if (!healthy) continue;
        throw err;
      }
      opts.onStarted?.(current, first);
      first = false;
      if (!healthy || opts.stopped.aborted) void current.shutdown(!healthy);
      await current.run();
      current = undefined;
    }
  } finally {
    opts.stopped.removeEventListener('abort', onStop);
    watch.abort();
    await watching;
  }
}
