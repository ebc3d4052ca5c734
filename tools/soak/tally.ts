import type { Kafka } from 'kafkajs';
import type { Pool } from 'pg';
import { HEADERS } from '../../src/kafka/message-format';
import { readWholeTopic } from '../../test/kit/relay-harness';

export interface Ledger {
  /** Outbox rows written by the soak, by producer. */
  events: { api: number; sql: number; total: number };
  /** Committed events that never reached the inbox (must be 0). */
  lost: number;
  /** Credits applied more than once, read from the balances (must be 0). */
  doubleApplied: number;
  /** Events parked instead of applied (none expected: every soak event is good input). */
  parked: number;
}

/** Every credit is 1, so per account: balance − opening balance must equal its number of events. */
export async function readLedger(pool: Pool): Promise<Ledger> {
  const { rows: [counts] } = await pool.query(`
    SELECT count(*) FILTER (WHERE payload->>'event_id' LIKE 'soak-api-%')::int AS api,
           count(*) FILTER (WHERE payload->>'event_id' LIKE 'soak-sql-%')::int AS sql,
           count(*)::int AS total,
           count(*) FILTER (WHERE i.event_id IS NULL)::int AS lost,
           (SELECT count(*)::int FROM temporal_outbox.inbox_parked_events) + count(*) FILTER (WHERE o.parked_at IS NOT NULL)::int AS parked
      FROM temporal_outbox.outbox_events o
      -- A join, not NOT EXISTS per row: the inbox's key leads with the consumer, so a lookup by
      -- event id alone scanned the whole inbox once per outbox row (a 357,000-event soak's count
      -- ran for minutes without end).
      LEFT JOIN (SELECT DISTINCT event_id FROM temporal_outbox.inbox_processed_events) i ON i.event_id = o.payload->>'event_id'`);
  const { rows: [excess] } = await pool.query(`
    SELECT coalesce(sum(greatest(0, a.balance - a.opening_balance - coalesce(e.n, 0))), 0)::int AS double_applied
      FROM accounts a
      LEFT JOIN (SELECT (payload->>'account_id')::bigint AS account_id, count(*) AS n FROM temporal_outbox.outbox_events GROUP BY 1) e USING (account_id)`);
  return {
    events: { api: counts.api, sql: counts.sql, total: counts.total },
    lost: counts.lost,
    doubleApplied: excess.double_applied,
    parked: counts.parked,
  };
}

/** Everything on the topic, read back from the start: copies beyond one per event are the relay's re-publishes. */
export async function countTopicCopies(kafka: Kafka, topic: string, timeoutMs = 120_000): Promise<{ messages: number; distinctEvents: number; duplicateCopies: number }> {
  const messages = await readWholeTopic(topic, timeoutMs, kafka);
  const distinct = new Set(messages.map((m) => m.headers[HEADERS.eventId] ?? `offset-${m.partition}-${m.offset}`));
  return { messages: messages.length, distinctEvents: distinct.size, duplicateCopies: messages.length - distinct.size };
}
