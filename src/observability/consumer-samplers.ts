import type { EachBatchPayload } from 'kafkajs';
import type { Pool } from 'pg';
import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import { countParkedEvents } from '../inbox/count-parked-events';
import { consumerLag, inboxParked } from './consumer-metrics';
import { every } from './periodic';

const PARKED_COUNT_CAP = 1_000_000;

/** The consumer worker's gauge read from PostgreSQL: its parked events, every METRICS_SAMPLE_MS. */
export function startConsumerSamplers(pool: Pool, config: Config, logger: Logger): { stop(): void } {
  const handler = config.consumer.inboxName;
  return every('inbox_parked', config.metrics.sampleMs, logger, async () => {
    inboxParked.set({ handler }, await countParkedEvents(pool, handler, PARKED_COUNT_CAP));
  });
}

/**
 * Wraps the kafkajs batch handler to record each partition's lag on arrival: everything from the
 * batch's first offset to the partition's end waits. What remains once a chunk is committed is
 * recorded by recordCommittedLag.
 */
export function withLagMetrics(eachBatch: (payload: EachBatchPayload) => Promise<void>) {
  return async (payload: EachBatchPayload): Promise<void> => {
    const { batch } = payload;
    if (!batch.isEmpty()) consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, Number(batch.highWatermark) - Number(batch.firstOffset())));
    await eachBatch(payload);
  };
}

/** A chunk was applied and its offset committed: what is left after it, as of its fetch. */
export function recordCommittedLag(chunk: { topic: string; partition: number; lastOffset: string; highWatermark?: string }): void {
  if (chunk.highWatermark === undefined) return;
  consumerLag.set({ topic: chunk.topic, partition: String(chunk.partition) }, Math.max(0, Number(chunk.highWatermark) - Number(chunk.lastOffset) - 1));
}
