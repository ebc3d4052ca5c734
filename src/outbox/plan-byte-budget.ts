import { RECORD_OVERHEAD_BYTES } from './kafka-message';
import type { PendingRowSize } from './queries/read-pending-sizes';

export interface ByteBudgetPlan {
  /** The id-order prefix to load and send now: its payloads add up to at most the budget (or it is one row). */
  loadIds: number[];
  loadBytes: number;
  /** Rows whose message cannot fit under Kafka's limit whatever their key and headers: park unread. */
  oversized: { id: number; reason: string }[];
  /** Legal rows past the budget: left pending for the next batch, untouched. */
  deferred: number;
}

/**
 * Cuts one relay batch at a byte budget, from sizes alone. Only a prefix in id order is taken,
 * so a deferred row is never overtaken by a later row of its key. At least one legal row is
 * always taken, so a single row bigger than the budget (but under Kafka's limit) still moves.
 *
 * A row is parked here only when its payload alone, plus the smallest framing any record has,
 * is over the limit: then no key or header can make it fit. A row close to the limit is loaded
 * and measured exactly by toKafkaMessage, which parks it if its key and headers tip it over.
 */
export function planByteBudget(sizes: PendingRowSize[], budgetBytes: number, maxMessageBytes: number): ByteBudgetPlan {
  const plan: ByteBudgetPlan = { loadIds: [], loadBytes: 0, oversized: [], deferred: 0 };
  let full = false;
  for (const { id, payloadBytes } of sizes) {
    const atLeast = payloadBytes + RECORD_OVERHEAD_BYTES;
    if (atLeast > maxMessageBytes) {
      plan.oversized.push({
        id,
        reason: `message of at least ${atLeast} bytes (payload ${payloadBytes} bytes) exceeds the ${maxMessageBytes}-byte Kafka limit (KAFKA_MAX_MESSAGE_BYTES)`,
      });
      continue;
    }
    if (!full && (plan.loadIds.length === 0 || plan.loadBytes + payloadBytes <= budgetBytes)) {
      plan.loadIds.push(id);
      plan.loadBytes += payloadBytes;
    } else {
      full = true;
      plan.deferred += 1;
    }
  }
  return plan;
}
