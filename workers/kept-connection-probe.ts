/** How a probe opens, checks and lets go of its own connection to one service. */
export interface ProbeConnection<C> {
  /** A new connection; one that fails to open cleans up after itself. */
  open(): Promise<C>;
  check(connection: C): Promise<unknown>;
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
 */
export function keptConnectionProbe<C>(service: ProbeConnection<C>): (() => Promise<void>) & { close(): Promise<void> } {
  let kept: C | undefined;
  let closed = false;
  const probe = async () => {
    const reused = kept;
    kept = undefined;
    const connection = reused ?? (await service.open());
    try {
      await service.check(connection);
    } catch (err) {
      await Promise.resolve(service.discard(connection)).catch(() => undefined);
      throw err;
    }
    if (closed || kept !== undefined) await service.release(connection).catch(() => undefined);
    else kept = connection;
  };
  const close = async () => {
    closed = true;
    const connection = kept;
    kept = undefined;
    if (connection !== undefined) await service.release(connection).catch(() => undefined);
  };
  return Object.assign(probe, { close });
}
