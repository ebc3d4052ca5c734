/** How a probe opens, checks and lets go of its own connection to one service. */
export interface ProbeConnection<C, R = unknown> {
  /** A new connection; one that fails to open cleans up after itself. */
  open(): Promise<C>;
  check(connection: C): Promise<R>;
  /** After a failed check: let go without waiting on the link (it may be dead). */
  discard(connection: C): Promise<unknown> | void;
  /** A healthy connection no longer needed. */
  release(connection: C): Promise<unknown>;
}

/**
 * A probe on its own connection, kept between rounds while it answers and let go at the first
 * failure, so every round while the link is down tries a new one: a heal that left the old
 * connections dead counts as healed as soon as a new one works, and a dead link fails the same
 * rounds, within the same bounds, as with a new connection each time. Keeping it matters: a new
 * connection every round cost the relay its wake-up latency at a trickle
 * (docs/measurements/relay-log.md). A round that answers after its timeout, when a newer
 * connection is already kept, releases its own instead of replacing the newer one.
 *
 * `deadlineMs`: the call itself fails once opening and checking took that long, and its
 * connection is discarded then (a connection that did not answer in time is never used again).
 * Without it the caller bounds the call (the link health check: workers/link-health.ts).
 */
export function keptConnectionProbe<C, R = unknown>(service: ProbeConnection<C, R>, deadlineMs?: number): (() => Promise<R>) & { close(): Promise<void> } {
  let kept: C | undefined;
  let closed = false;
  const discard = (connection: C) => Promise.resolve(service.discard(connection)).catch(() => undefined);
  const probe = async () => {
    const reused = kept;
    kept = undefined;
    let connection: C | undefined;
    let late = false;
    const attempt = (async () => {
      const opened = reused ?? (await service.open());
      connection = opened;
      if (late) {
        void discard(opened);
        throw new Error('opened after its deadline');
      }
      return service.check(opened);
    })();
    let result: R;
    try {
      result = deadlineMs === undefined ? await attempt : await beforeDeadline(attempt, deadlineMs, () => (late = true));
    } catch (err) {
      if (connection !== undefined) await discard(connection);
      throw err;
    }
    if (closed || kept !== undefined) await service.release(connection!).catch(() => undefined);
    else kept = connection;
    return result;
  };
  const close = async () => {
    closed = true;
    const connection = kept;
    kept = undefined;
    if (connection !== undefined) await service.release(connection).catch(() => undefined);
  };
  return Object.assign(probe, { close });
}

/** `work`'s answer, or a rejection once `ms` have passed (`onLate` is told first); `work` is left to end by itself. */
function beforeDeadline<R>(work: Promise<R>, ms: number, onLate: () => void): Promise<R> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onLate();
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
