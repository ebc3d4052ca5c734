import type { Kafka } from 'kafkajs';
import type { Config } from '../config/env';
import { checkTopicRedeliveryHorizon, type HorizonVerdict } from './topic-retention';
import { eventTopics } from './topics';

export class RedeliveryHorizonError extends Error {
  override name = 'RedeliveryHorizonError';
}

/** The first of these topics that can redeliver past the inbox horizon, else safe with the smallest margin. */
async function verdict(kafka: Kafka, config: Config, topics: string[]): Promise<HorizonVerdict> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    let marginMs = Infinity;
    for (const topic of topics) {
      const v = (await checkTopicRedeliveryHorizon(admin, config, topic)).verdict;
      if (!v.safe) return v;
      marginMs = Math.min(marginMs, v.marginMs);
    }
    return { safe: true, marginMs };
  } finally {
    await admin.disconnect();
  }
}

/**
 * Throws unless the real retention of every topic the consumer reads (routed ones included) is
 * inside the inbox horizon (a consumer refuses to start).
 */
export async function assertRedeliveryHorizon(kafka: Kafka, config: Config, topics: string[] = eventTopics(config.kafka)): Promise<void> {
  const v = await verdict(kafka, config, topics);
  if (!v.safe) throw new RedeliveryHorizonError(`${v.problem}. Fix: ${v.fix}`);
}

/**
 * Re-reads the topics' retention every `everyMs` while the consumer runs: someone may raise it on
 * the broker at any time. Calls `onUnsafe` once when it no longer fits; a failed read (broker
 * briefly away) is not a verdict and is tried again next time. Returns a stop function.
 */
export function watchRedeliveryHorizon(kafka: Kafka, config: Config, topics: string[], everyMs: number, onUnsafe: (err: RedeliveryHorizonError) => void): () => void {
  let done = false;
  const timer = setInterval(() => {
    void verdict(kafka, config, topics).then(
      (v) => {
        if (done || v.safe) return;
        done = true;
        clearInterval(timer);
        onUnsafe(new RedeliveryHorizonError(`${v.problem}. Fix: ${v.fix}`));
      },
      () => undefined,
    );
  }, everyMs);
  timer.unref();
  return () => {
    done = true;
    clearInterval(timer);
  };
}
