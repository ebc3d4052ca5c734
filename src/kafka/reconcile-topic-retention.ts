import type { Admin, Kafka } from 'kafkajs';
import type { Config } from '../config/env';
import { readTopicRetention, setTopicRetention } from './topic-retention';
import { eventTopics } from './topics';

export interface RetentionReconciliation {
  topic: string;
  /** 'kept': already as configured; 'changed': set now; 'drift': differs and could not be changed. */
  outcome: 'kept' | 'changed' | 'drift';
  fromMs: number | null;
  toMs: number;
  detail?: string;
}

/**
 * Brings every existing events topic's retention (the default topic and each routed one) to
 * KAFKA_TOPIC_RETENTION_MS, the value the inbox horizon is checked against at start-up. Where
 * this client may not alter a topic (a managed cluster, a topic owned by someone else), the
 * drift is reported instead of failing setup.
 */
export async function reconcileTopicRetention(kafka: Kafka, config: Config): Promise<RetentionReconciliation[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const outcomes: RetentionReconciliation[] = [];
    for (const topic of eventTopics(config.kafka)) outcomes.push(await reconcileOne(admin, topic, config.kafka.topicRetentionMs));
    return outcomes;
  } finally {
    await admin.disconnect();
  }
}

async function reconcileOne(admin: Admin, topic: string, toMs: number): Promise<RetentionReconciliation> {
  const current = await readTopicRetention(admin, topic);
  if (current.retentionMs === toMs) return { topic, outcome: 'kept', fromMs: current.retentionMs, toMs };
  try {
    await setTopicRetention(admin, topic, toMs);
  } catch (err) {
    return { topic, outcome: 'drift', fromMs: current.retentionMs, toMs, detail: (err as Error).message };
  }
  return { topic, outcome: 'changed', fromMs: current.retentionMs, toMs };
}

export function describeReconciliation(r: RetentionReconciliation): string {
  const from = r.fromMs === null ? 'for ever' : `${r.fromMs} ms`;
  if (r.outcome === 'kept') return `topic ${r.topic} retention ${from}, as KAFKA_TOPIC_RETENTION_MS says`;
  if (r.outcome === 'changed') return `topic ${r.topic} retention changed from ${from} to ${r.toMs} ms (KAFKA_TOPIC_RETENTION_MS)`;
  return `topic ${r.topic} retention is ${from}, not ${r.toMs} ms (KAFKA_TOPIC_RETENTION_MS), and could not be changed (${r.detail}): change it on the broker, or set KAFKA_TOPIC_RETENTION_MS to match`;
}
