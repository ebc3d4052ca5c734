// Shared by the relay workflow and the relay session activity; no imports, so both workflow and
// Node code may use it.

/**
 * How long to wait after the `failureStreak`-th failure in a row: 1 s, doubling, at most 30 s
 * (from the sixth on). The shard's back-off after a failed placement or session, and after a
 * batch of only refused rows (they keep their place, so retrying at once would spin), in the
 * workflow's local mode and in a relay session alike.
 */
export function backoffMs(failureStreak: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.min(failureStreak - 1, 5));
}
