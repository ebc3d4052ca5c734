import { defineSignal, defineUpdate } from '@temporalio/workflow';

// The operator's controls of a relay shard: pause, resume and re-drive travel as signals and an
// update, so each one is an event in the shard's history (who asked, when, why) and shows in the
// UI. Node code (the CLI) passes these definitions to `handle.signal` / `handle.executeUpdate`,
// so a rename is a compile error, not a silently ignored signal name.

export interface PauseRequest {
  /** Why; shown in the shard's current details and status while it is paused. */
  reason?: string;
}

export interface PauseState {
  reason: string;
  /** When the workflow received the pause (workflow time, ISO). */
  since: string;
}

/** Finish the batch in hand (published and marked), then publish nothing until `resume`. */
export const pauseSignal = defineSignal<[PauseRequest]>('pause');
/** Carry on where the shard left off; everything enqueued meanwhile is pending and gets drained. */
export const resumeSignal = defineSignal<[PauseRequest]>('resume');

export interface RedriveRequest {
  /** Outbox ids; absent means every parked row of the shard. Ids of other shards are ignored. */
  ids?: number[];
  reason?: string;
}

/** Put this shard's parked rows back in the queue (fresh attempt budget); answers with the ids. */
export const redriveUpdate = defineUpdate<{ redriven: number[] }, [RedriveRequest]>('redrive');
