import type { Kafka } from 'kafkajs';
import type { Config } from '../config/env';
import { checkTopicRedeliveryHorizon } from './topic-retention';

export class RedeliveryHorizonError extends Error {
  override name = 'RedeliveryHorizonError';
}

async function verdict(kafka: Kafka, config: Config) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await checkTopicRedeliveryHorizon(admin, config)).verdict;
  } finally {
    await admin.disconnect();
  }
}

/** Throws unless the events topic's real retention is inside the inbox horizon (a consumer refuses to start). */
export async function assertRedeliveryHorizon(kafka: Kafka, config: Config): Promise<void> {
  const v = await verdict(kafka, config);
  if (!v.safe) throw new RedeliveryHorizonError(`${v.problem}. Fix: ${v.fix}`);
}

/**
 * Re-reads the topic's retention every `everyMs` while the consumer runs: someone may raise it on
 * the broker at any time. Calls `onUnsafe` once when it no longer fits; a failed read (broker
 * briefly away) is not a verdict and is tried again next time. Returns a stop function.
 */
export function watchRedeliveryHorizon(kafka: Kafka, config: Config, everyMs: number, onUnsafe: (err: RedeliveryHorizonError) => void): () => void {
  let done = false;
  const timer = setInterval(() => {
    void verdict(kafka, config).then(
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
