import type { EventBatchResult } from '../workflows/inbox-contract';

// The consumer may commit a chunk's offsets once the transaction holding its events' inbox rows
// and effects has committed in PostgreSQL: that, not the workflow's completion, is what makes
// redelivery harmless. With eager start the batch's local activity runs in this very process, so
// it tells the waiting flight here the moment its transaction commits, instead of the flight
// waiting for the workflow to complete and for its result to come back from the server (the
// workflow task's completion, the server writing the close, the result's long poll: a round trip
// per flight on the path of every event that arrived meanwhile). The workflow still completes as
// before; a flight whose activity ran elsewhere (no eager start, a retry on another worker) hears
// nothing here and learns from the workflow's result, as before.

type Listener = (result: EventBatchResult) => void;

export class AppliedNotices {
  private listeners = new Map<string, Set<Listener>>();

  /** Called before the workflow starts, so a notice that comes first is not missed. Call `stop` when done. */
  expect(workflowId: string): { applied: Promise<EventBatchResult>; stop(): void } {
    let listener: Listener = () => undefined;
    const applied = new Promise<EventBatchResult>((resolve) => (listener = resolve));
    let set = this.listeners.get(workflowId);
    if (!set) this.listeners.set(workflowId, (set = new Set()));
    set.add(listener);
    return {
      applied,
      stop: () => {
        set.delete(listener);
        if (set.size === 0 && this.listeners.get(workflowId) === set) this.listeners.delete(workflowId);
      },
    };
  }

  /** The batch of this workflow is committed in PostgreSQL (its inbox rows and effects). */
  applied(workflowId: string, result: EventBatchResult): void {
    for (const listener of this.listeners.get(workflowId) ?? []) listener(result);
  }

  /** Flights waiting now (a leak check for tests). */
  get waiting(): number {
    return this.listeners.size;
  }
}
