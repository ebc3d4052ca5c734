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

export interface ConsumerAudit {
  consumer: string;
  eventTypes: string[];
  /** Published events of its types in the window. */
  expected: number;
  /** Of those, in its inbox (exactly once: the inbox key allows no second row). */
  applied: number;
  parked: { count: number; listed: ParkedEvent[] };
  notApplied: { count: number; listed: NotApplied[] };
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
  /** The service's own checks (its invariants over its own tables), in registration order. */
  checks: AuditCheckReport[];
  /** True when anything was lost, doubled or changed by hand (parked rows with a reason are not drift). */
  drift: boolean;
  driftCounts: DriftCounts;
  durationMs: number;
}

/** Drift per kind: `notApplied` (the core's delivery proof), then one entry per check, by its name. */
export type DriftCounts = { notApplied: number } & Record<string, number>;
