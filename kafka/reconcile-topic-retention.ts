import type { Kafka } from 'kafkajs';
import type { Config } from '../config/env';
import { readTopicRetention, setTopicRetention } from './topic-retention';

export interface RetentionReconciliation {
  topic: string;
  /** 'kept': already as configured; 'changed': set now; 'drift': differs and could not be changed. */
  outcome: 'kept' | 'changed' | 'drift';
  fromMs: number | null;
  toMs: number;
  detail?: string;
}

/**
 * Brings an existing events topic's retention to KAFKA_TOPIC_RETENTION_MS, the value the inbox
 * horizon is checked against at start-up. Where this client may not alter the topic (a managed
 * cluster, a topic owned by someone else), the drift is reported instead of failing setup.
 */
export async function reconcileTopicRetention(kafka: Kafka, config: Config): Promise<RetentionReconciliation> {
  const topic = config.kafka.topic;
  const toMs = config.kafka.topicRetentionMs;
  const admin = kafka.admin();
  await admin.connect();
  try {
    const current = await readTopicRetention(admin, topic);
    if (current.retentionMs === toMs) return { topic, outcome: 'kept', fromMs: current.retentionMs, toMs };
    try {
      await setTopicRetention(admin, topic, toMs);
    } catch (err) {
      return { topic, outcome: 'drift', fromMs: current.retentionMs, toMs, detail: (err as Error).message };
    }
    return { topic, outcome: 'changed', fromMs: current.retentionMs, toMs };
  } finally {
    await admin.disconnect();
  }
}

export function describeReconciliation(r: RetentionReconciliation): string {
  const from = r.fromMs === null ? 'for ever' : `${r.fromMs} ms`;
  if (r.outcome === 'kept') return `topic ${r.topic} retention ${from}, as KAFKA_TOPIC_RETENTION_MS says`;
  if (r.outcome === 'changed') return `topic ${r.topic} retention changed from ${from} to ${r.toMs} ms (KAFKA_TOPIC_RETENTION_MS)`;
  return `topic ${r.topic} retention is ${from}, not ${r.toMs} ms (KAFKA_TOPIC_RETENTION_MS), and could not be changed (${r.detail}): change it on the broker, or set KAFKA_TOPIC_RETENTION_MS to match`;
}
