import type { Payload } from '@temporalio/common';
import type { EventBatch } from '../../workflows/inbox/contract';

// A batch's way from the consumer's event loop to its applyEvents activity without being decoded
// again. The batch is the applyEventsWorkflow's input (durable in its history, readable in the
// UI); the workflow hands that payload to its local activity untouched (workflows/inbox/index.ts), and
// the activity normally runs in the very process that started the workflow (eager start, local
// activity). So this process keeps each batch it started, beside its encoded bytes, until the
// workflow returns; the activity takes the batch from here when its input is byte for byte the
// payload this process encoded, and decodes the input otherwise (another worker took over the
// workflow task, a retry after this process restarted, a workflow started elsewhere).
//
// Decoding a 1,800-event batch a second time was one more copy of every event for the garbage
// collector on the consumer's event loop (docs/measurements/consumer-log.md, "From 0.54× to
// 0.70×").

interface Held {
  data: Uint8Array;
  batch: EventBatch;
}

export class InFlightBatches {
  private readonly byWorkflowId = new Map<string, Held>();

  /** Keeps `batch` (encoded as `payload`) for the activity of `workflowId` until the returned release is called. */
  hold(workflowId: string, payload: Payload, batch: EventBatch): () => void {
    const held: Held = { data: payload.data ?? new Uint8Array(), batch };
    this.byWorkflowId.set(workflowId, held);
    return () => {
      // A later start under the same id (a retried chunk) may have replaced it: leave that one.
      if (this.byWorkflowId.get(workflowId) === held) this.byWorkflowId.delete(workflowId);
    };
  }

  /** The batch held for `workflowId` when `payload` is exactly its encoding; undefined otherwise. */
  find(workflowId: string, payload: Payload): EventBatch | undefined {
    const held = this.byWorkflowId.get(workflowId);
    if (!held || !payload.data) return undefined;
    return Buffer.from(held.data.buffer, held.data.byteOffset, held.data.byteLength).equals(payload.data) ? held.batch : undefined;
  }

  get size(): number {
    return this.byWorkflowId.size;
  }
}
