import type { SqlExecutor } from '../db/executor';
import type { AuditedConsumer, AuditFinding, AuditWindow } from './types';

/** What a check is given: the run's window (database clock), its consumers, and how many findings to list. */
export interface AuditCheckContext {
  window: AuditWindow;
  consumers: AuditedConsumer[];
  maxListed: number;
}

/** What a check returns: how many things it checked, and its findings (exact count, first `maxListed` listed). */
export interface AuditCheckResult {
  checked: number;
  findings: { count: number; listed: AuditFinding[] };
}

/**
 * A service's own invariant, proved by each reconciliation run beside the core's delivery proof
 * (every published event applied once or parked). It runs on the audit's worker, under its
 * database role (read-only; grant it SELECT on what it reads), and must be a read that is safe
 * to retry. Any finding is drift.
 */
export interface AuditCheck {
  /** Also its drift kind: `outbox_audit_drift{kind="<name>"}`. A word, unique among the checks. */
  name: string;
  description: string;
  run(db: SqlExecutor, context: AuditCheckContext): Promise<AuditCheckResult>;
}

const CHECK_NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;

/** Checks and returns `check` (the hook a service registers its invariant with: typed, validated once). */
export function defineAuditCheck(check: AuditCheck): AuditCheck {
  if (!CHECK_NAME.test(check.name) || check.name === 'notApplied') {
    throw new Error(`audit check name must be a word (letters, digits, _), not notApplied; got ${JSON.stringify(check.name)}`);
  }
  if (typeof check.run !== 'function') throw new Error(`audit check ${check.name} has no run function`);
  return check;
}

/** Throws when two checks share a name (their drift series would overwrite each other). */
export function assertDistinctChecks(checks: readonly AuditCheck[]): void {
  const seen = new Set<string>();
  for (const c of checks) {
    if (seen.has(c.name)) throw new Error(`two audit checks are named ${c.name}`);
    seen.add(c.name);
  }
}
