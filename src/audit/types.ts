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

/** Applied (the ledger holds its credit) but the inbox row is gone: a redelivery would apply it again. */
export interface InboxRowMissing {
  consumer: string;
  eventId: string;
  accountId: string;
  amount: string;
}

/** Applied with another account or amount than the published event says. */
export interface AppliedDiffers {
  consumer: string;
  eventId: string;
  published: { accountId: string | null; amount: string | null };
  applied: { accountId: string; amount: string };
}

/** The payments invariant broken: balance ≠ opening balance + sum of applied credits. */
export interface BalanceMismatch {
  accountId: string;
  balance: string;
  expected: string;
  /** balance − expected. */
  difference: string;
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
  inboxRowMissing: { count: number; listed: InboxRowMissing[] };
  appliedDiffers: { count: number; listed: AppliedDiffers[] };
}

export interface InvariantAudit {
  invariant: 'payments: balance = opening balance + sum of applied credits';
  accountsChecked: number;
  mismatches: { count: number; listed: BalanceMismatch[] };
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
  invariant: InvariantAudit;
  /** True when anything was lost, doubled or changed by hand (parked rows with a reason are not drift). */
  drift: boolean;
  driftCounts: DriftCounts;
  durationMs: number;
}

export interface DriftCounts {
  notApplied: number;
  inboxRowMissing: number;
  appliedDiffers: number;
  balanceMismatches: number;
}
