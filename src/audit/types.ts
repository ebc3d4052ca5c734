// The audit's contract: what a run checks and what it reports. Shared by the
// workflow, its activities, the doctor and the CLI, so it imports nothing (workflow-safe).
//
// Where the feature lives: workflows/audit/audit.ts (the run), activities/audit/ (its
// activities), src/audit/queries/ (one statement each), src/audit/schedule.ts (the Schedule),
// src/doctor/checks/audit-schedule.ts, src/cli/commands/audit.ts, docs/audit.md.

export interface AuditedConsumer {
  /** The inbox identity (inbox_processed_events.consumer). */
  consumer: string;
  /** Event types this consumer must apply: each published one must reach its inbox. */
  eventTypes: string[];
}

export interface AuditInput {
  /** Events created in [now - settle - window, now - settle) are checked (database clock). */
  windowMs?: number;
  settleMs?: number;
  consumers?: AuditedConsumer[];
  /** At most this many ids per finding list (the counts are always exact). */
  maxListed?: number;
  /**
   * Read the audited consumers' topics over the window and report events only the topic has
   * (what a failover with asynchronous replication leaves). The worker needs Kafka for it.
   */
  readTopics?: boolean;
  /**
   * At most about this many messages read per topic and run, from the window's start: a busy
   * topic's read is cut short there (the report says how much was read) and the next runs, whose
   * windows start one interval later, read on. Cover interval × peak rate.
   */
  maxTopicMessages?: number;
}

export type AuditSettings = Required<AuditInput>;

export interface AuditWindow {
  from: string;
  to: string;
}

export interface AuditPlan {
  settings: AuditSettings;
  window: AuditWindow;
}

/** A published event that reached no inbox of a consumer that must apply it, and is not parked there. */
export interface NotApplied {
  consumer: string;
  eventId: string;
  outboxId: number;
  publishedAt: string;
}

/** One thing a service's own audit check found wrong (a customer, an event, ...). */
export interface AuditFinding {
  /**
   * What it concerns, as `kind:id` (`event:<event id>`, `customer:<id>`): the run's
   * OutboxAuditFindings search attribute lists these, so a search finds the runs that named it.
   */
  key: string;
  /** One line an operator reads (the report, `audit last`, the doctor). */
  message: string;
  /** The finding's figures, for a program reading the report. */
  detail?: Record<string, string | null>;
}

/** What one audit check (registered by the service: src/audit/check.ts) reported in a run. */
export interface AuditCheckReport {
  /** The check's name, also its drift kind (`outbox_audit_drift{kind}`). */
  name: string;
  /** What it proves, in one line. */
  description: string;
  /** How many things it checked (customers, events, ...). */
  checked: number;
  /** Findings: the count is exact, the list the first `maxListed`. */
  findings: { count: number; listed: AuditFinding[] };
}

export interface ParkedEvent {
  where: 'outbox' | 'inbox';
  consumer?: string;
  eventId: string | null;
  outboxId?: number;
  reason: string;
}

/** An event a consumer applied (its inbox row, applied in the window) that has no outbox row. */
export interface AppliedWithoutOutboxRow {
  consumer: string;
  eventId: string;
  processedAt: string;
}

/** An event on a topic that neither the outbox nor an audited consumer's inbox knows. */
export interface TopicOnlyEvent {
  topic: string;
  eventId: string;
  partition: number;
  offset: string;
  /** The message's timestamp (ISO). */
  publishedAt: string;
}

/** One topic of the audited consumers, read over the window. */
export interface TopicAudit {
  topic: string;
  /** Messages published in the window. */
  inWindow: number;
  /** Of those, how many this run read (fewer when maxTopicMessages cut it short). */
  read: number;
  onTopicOnly: { count: number; listed: TopicOnlyEvent[] };
}

export interface ConsumerAudit {
  consumer: string;
  eventTypes: string[];
  /** Published events of its types in the window. */
  expected: number;
  /** Of those, in its inbox (exactly once: the inbox key allows no second row). */
  applied: number;
  parked: { count: number; listed: ParkedEvent[] };
  notApplied: { count: number; listed: NotApplied[] };
  /**
   * Applied in the window (by processed_at) with no outbox row: its producer's transaction was
   * lost. Absent from a run whose activities predate the check (its history replays without it).
   */
  appliedWithoutOutboxRow?: { count: number; listed: AppliedWithoutOutboxRow[] };
}

export interface OutboxWindowAudit {
  events: number;
  published: number;
  /** Not yet published (still in the relay's queue): not drift, just not due. */
  pending: number;
  parked: { count: number; listed: ParkedEvent[] };
}

export interface AuditReport {
  window: AuditWindow;
  settings: AuditSettings;
  outbox: OutboxWindowAudit;
  consumers: ConsumerAudit[];
  /** The audited consumers' topics, each read over the window; empty when readTopics is off, absent from reports older than the check. */
  topics?: TopicAudit[];
  /** The service's own checks (its invariants over its own tables), in registration order. */
  checks: AuditCheckReport[];
  /** True when anything was lost, doubled or changed by hand (parked rows with a reason are not drift). */
  drift: boolean;
  driftCounts: DriftCounts;
  durationMs: number;
}

/**
 * Drift per kind: the core's delivery proof (`notApplied`, and what a lost database transaction
 * leaves: `appliedWithoutOutboxRow`, `onTopicOnly`), then one entry per check, by its name.
 */
export type DriftCounts = { notApplied: number; appliedWithoutOutboxRow: number; onTopicOnly: number } & Record<string, number>;
