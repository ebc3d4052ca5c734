import type { SqlExecutor } from '../db/executor';
import type { TopicEvent } from '../kafka/topic-events-since';
import { appliedWithoutOutboxRow as appliedWithoutOutbox } from './queries/applied-without-outbox';
import type { AppliedWithoutOutboxRow, AuditedConsumer } from './types';

// The audit's repair, for what a PostgreSQL failover with asynchronous replication leaves behind
// (docs/guarantees.md, "PostgreSQL failover"): the promoted replica lacks the primary's last
// transactions, while Kafka keeps the messages and the consumer offsets committed past them.
//
//   published, never applied   the mark survived, the inbox row and the effect did not, and the
//                              consumer's offset is past the message: nothing will ever apply
//                              it. Repaired: published_at = NULL puts the event back through the
//                              relay; an inbox that did apply it after all absorbs the repeat.
//   applied, no outbox row     the producer's transaction was lost, its message was not: a
//                              consumer applied it (again) after the failover. Reported only: the
//                              effect stands for an event its producer no longer records, which
//                              only the business can settle (re-create its record or compensate).
//   on the topic, nowhere else  the producer's commit was acknowledged and lost after the relay
//                              published it; no consumer applied it here. Reported only: only
//                              the topic still has it (src/kafka/topic-events-since.ts reads it).
//
// The database's kinds are read in one window of events, on its clock, like the audit's.

export type { AppliedWithoutOutboxRow } from './types';

/** How long before a window an event applied in it may have been created (the audit's default too). */
export const DEFAULT_CREATED_BEFORE_MARGIN_MS = 3_600_000;

export interface RepairWindow {
  /** Events created (or, for inbox rows, applied) at or after this instant (ISO). */
  since: string;
  /** ... and before this one: younger events may still be on their way. */
  until: string;
}

export interface UnappliedEvent {
  consumer: string;
  outboxId: number;
  eventId: string;
  publishedAt: string;
}

/**
 * Published events of the consumer's types with no inbox row of that consumer and not parked
 * there: what the audit reports as "not applied", every one of them (the audit lists 100).
 */
export const UNAPPLIED_EVENTS_SQL = `
  SELECT o.id::text AS "outboxId", o.payload ->> 'event_id' AS "eventId", o.published_at AS "publishedAt"
    FROM temporal_outbox.outbox_events o
   WHERE o.created_at >= $2::timestamptz AND o.created_at < $3::timestamptz
     AND o.published_at IS NOT NULL
     AND o.event_type = ANY($4::text[])
     AND NOT EXISTS (SELECT 1 FROM temporal_outbox.inbox_processed_events i WHERE i.consumer = $1 AND i.event_id = o.payload ->> 'event_id')
     AND NOT EXISTS (SELECT 1 FROM temporal_outbox.inbox_parked_events p WHERE p.consumer = $1 AND p.event_id = o.payload ->> 'event_id')
   ORDER BY o.id`;

/** Back to pending, only rows still marked: a row another run already reset is not counted twice. */
export const REPUBLISH_SQL = `
  UPDATE temporal_outbox.outbox_events SET published_at = NULL
   WHERE id = ANY($1::bigint[]) AND published_at IS NOT NULL
  RETURNING id`;

/** Of the given event ids (read from the topic), those with no outbox row and no inbox row of any consumer. */
export const IN_NO_TABLE_SQL = `
  SELECT w.event_id AS "eventId"
    FROM unnest($1::text[]) w(event_id)
   WHERE NOT EXISTS (SELECT 1 FROM temporal_outbox.outbox_events o WHERE o.payload ->> 'event_id' = w.event_id)
     AND NOT EXISTS (SELECT 1 FROM temporal_outbox.inbox_processed_events i WHERE i.event_id = w.event_id)`;

export interface RepairFindings {
  window: RepairWindow;
  unapplied: UnappliedEvent[];
  appliedWithoutOutboxRow: AppliedWithoutOutboxRow[];
  /** Undefined when the topic was not read. */
  onTopicOnly?: TopicEvent[];
}

/** The topic's events (from `topicEventsSince`) that neither the outbox nor any inbox knows. */
export async function findOnTopicOnly(db: SqlExecutor, events: TopicEvent[]): Promise<TopicEvent[]> {
  if (events.length === 0) return [];
  const { rows } = await db.query<{ eventId: string }>(IN_NO_TABLE_SQL, [[...new Set(events.map((e) => e.eventId))]]);
  const unknown = new Set(rows.map((r) => r.eventId));
  return events.filter((e) => unknown.has(e.eventId));
}

export interface RepairOptions {
  consumers: AuditedConsumer[];
  window: RepairWindow;
  /** How long before `since` an applied event's outbox row may have been created (default 1 h). */
  createdBeforeMarginMs?: number;
}

export async function findRepairs(db: SqlExecutor, opts: RepairOptions): Promise<RepairFindings> {
  const unapplied: UnappliedEvent[] = [];
  const appliedWithoutOutboxRow: AppliedWithoutOutboxRow[] = [];
  const { since, until } = opts.window;
  for (const c of opts.consumers) {
    const gaps = await db.query<{ outboxId: string; eventId: string; publishedAt: Date }>(UNAPPLIED_EVENTS_SQL, [c.consumer, since, until, c.eventTypes]);
    unapplied.push(...gaps.rows.map((r) => ({ consumer: c.consumer, outboxId: Number(r.outboxId), eventId: r.eventId, publishedAt: r.publishedAt.toISOString() })));
    const orphans = await appliedWithoutOutbox(db, { consumer: c.consumer, from: since, to: until, createdBeforeMarginMs: opts.createdBeforeMarginMs ?? DEFAULT_CREATED_BEFORE_MARGIN_MS, maxListed: null });
    appliedWithoutOutboxRow.push(...orphans.listed);
  }
  return { window: opts.window, unapplied, appliedWithoutOutboxRow };
}

/**
 * Puts the unapplied events back through the relay (published_at = NULL: pending again; the
 * relay's full scan finds rows below its high-water mark within RELAY_FULL_SCAN_INTERVAL_MS).
 * An event unapplied for one consumer is re-sent to all of its topic's consumers: the others'
 * inboxes absorb it. Returns the outbox ids reset.
 */
export async function republishUnapplied(db: SqlExecutor, findings: RepairFindings): Promise<number[]> {
  const ids = [...new Set(findings.unapplied.map((u) => u.outboxId))];
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(REPUBLISH_SQL, [ids]);
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** The window on the database's clock: [now − windowMs − settleMs, now − settleMs), or from `since`. */
export async function repairWindow(db: SqlExecutor, opts: { since?: string; windowMs: number; settleMs: number }): Promise<RepairWindow> {
  const { rows } = await db.query<{ since: Date; until: Date }>(
    `SELECT coalesce($1::timestamptz, now() - make_interval(secs => ($2::float8 + $3::float8) / 1000)) AS since,
            now() - make_interval(secs => $3::float8 / 1000) AS until`,
    [opts.since ?? null, opts.windowMs, opts.settleMs],
  );
  return { since: rows[0]!.since.toISOString(), until: rows[0]!.until.toISOString() };
}
