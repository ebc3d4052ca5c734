import { ConfigResourceTypes, ConfigSource, type Admin } from 'kafkajs';
import type { Config } from '../config/env';

// The inbox may forget an event id only once Kafka can no longer redeliver the event. That
// depends on the topic's *real* retention on the broker, which anyone can change (or which
// a topic created elsewhere never had), not on what KAFKA_TOPIC_RETENTION_MS says.

export interface TopicRetention {
  topic: string;
  /** How long the broker keeps a message; null: forever (retention.ms=-1, or compaction). */
  retentionMs: number | null;
  cleanupPolicy: string;
}

/** Reads a topic's effective retention and cleanup policy from the broker (admin DescribeConfigs). */
export async function readTopicRetention(admin: Admin, topic: string): Promise<TopicRetention> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }],
  });
  const entries = resources[0]?.configEntries ?? [];
  const value = (name: string) => entries.find((e) => e.configName === name)?.configValue;
  const retention = Number(value('retention.ms'));
  const cleanupPolicy = value('cleanup.policy') ?? 'delete';
  // A compacted topic keeps the last message of every key for ever: redeliverable for ever.
  const forever = !Number.isFinite(retention) || retention < 0 || cleanupPolicy.includes('compact');
  return { topic, retentionMs: forever ? null : retention, cleanupPolicy };
}

export type HorizonVerdict = { safe: true; marginMs: number } | { safe: false; problem: string; fix: string };

/**
 * The inbox horizon must exceed what the broker can redeliver: the topic's real retention plus
 * the lag a consumer may fall behind (CONSUMER_MAX_LAG_MS). Otherwise an id forgotten by the
 * inbox can come back from Kafka and be credited a second time.
 */
export function judgeRedeliveryHorizon(retention: TopicRetention, limits: { inboxRetentionMs: number; maxConsumerLagMs: number }): HorizonVerdict {
  const fix =
    `set the topic's retention below INBOX_RETENTION_MS - CONSUMER_MAX_LAG_MS (${limits.inboxRetentionMs - limits.maxConsumerLagMs} ms): ` +
    `\`npx temporal-outbox setup\` sets it to KAFKA_TOPIC_RETENTION_MS, or raise INBOX_RETENTION_MS`;
  if (retention.retentionMs === null) {
    return {
      safe: false,
      problem: `topic ${retention.topic} keeps messages for ever (${retention.cleanupPolicy.includes('compact') ? `cleanup.policy=${retention.cleanupPolicy}` : 'retention.ms=-1'}), but the inbox forgets event ids after INBOX_RETENTION_MS (${limits.inboxRetentionMs} ms): a redelivery after that would be credited twice`,
      fix,
    };
  }
  const needed = retention.retentionMs + limits.maxConsumerLagMs;
  if (limits.inboxRetentionMs <= needed) {
    return {
      safe: false,
      problem: `topic ${retention.topic} keeps messages for ${retention.retentionMs} ms (retention.ms on the broker); with CONSUMER_MAX_LAG_MS that is ${needed} ms, not less than INBOX_RETENTION_MS (${limits.inboxRetentionMs} ms): a redelivery after the inbox forgot the event would be credited twice`,
      fix,
    };
  }
  return { safe: true, marginMs: limits.inboxRetentionMs - needed };
}

/** Reads an events topic's retention (the default topic unless named) and judges it against the configured inbox horizon. */
export async function checkTopicRedeliveryHorizon(admin: Admin, config: Config, topic = config.kafka.topic): Promise<{ retention: TopicRetention; verdict: HorizonVerdict }> {
  const retention = await readTopicRetention(admin, topic);
  return { retention, verdict: judgeRedeliveryHorizon(retention, { inboxRetentionMs: config.inbox.retentionMs, maxConsumerLagMs: config.kafka.maxConsumerLagMs }) };
}

/**
 * Sets an existing topic's retention.ms to `retentionMs`, keeping its other settings. Kafka's
 * (non-incremental) AlterConfigs replaces a topic's whole set of overrides, so the current
 * overrides are read first and sent back with the new value.
 */
export async function setTopicRetention(admin: Admin, topic: string, retentionMs: number): Promise<void> {
  const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] });
  const overrides = (resources[0]?.configEntries ?? [])
    .filter((e) => e.configSource === ConfigSource.TOPIC_CONFIG && !e.isSensitive && e.configName !== 'retention.ms')
    .map((e) => ({ name: e.configName, value: e.configValue }));
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [...overrides, { name: 'retention.ms', value: String(retentionMs) }] }],
  });
}
