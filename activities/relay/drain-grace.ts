import type { MarkInFlight } from './mark-in-flight';
import type { PendingListener } from './pending-listener';
import type { RelaySessionInput } from './types';

/**
 * A short grace before a drained session hands the shard back to the workflow's idle wait: at a
 * steady trickle of events a batch is often empty for a moment, and ending the session there
 * would cost a Temporal round trip per trickle. The next fetch is the check for work, so a wake
 * costs one poll, not a probe and then the same poll again.
 */
export class DrainGrace {
  /** Set at the first empty fetch after work: the session ends 'drained' once it passes. */
  private drainedAt: number | undefined;

  constructor(
    private readonly listener: PendingListener,
    private readonly input: RelaySessionInput,
    private readonly marks: MarkInFlight,
    private readonly ending: AbortSignal,
  ) {}

  /** Nothing to poll since `since`: waits out what is left of the grace for a notification; false once it has passed. */
  async notifiedWithin(since: number): Promise<boolean> {
    await this.marks.finish();
    this.drainedAt ??= Date.now() + this.input.drainGraceMs;
    const left = this.drainedAt - Date.now();
    const { shardIndex, shardCount } = this.input;
    return left > 0 && (await this.listener.wait(left, this.ending, since, { shardIndex, shardCount }));
  }

  /** A poll found work: the next drain starts a new grace. */
  reset(): void {
    this.drainedAt = undefined;
  }
}
