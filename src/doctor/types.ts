import type { Client } from '@temporalio/client';
import type { Config } from '../config/env';
import type { SqlExecutor } from '../db/executor';

export type Severity = 'warn' | 'fail';
export type Status = 'ok' | Severity;

/** Something wrong, and the one thing to do about it. */
export interface Problem {
  severity: Severity;
  message: string;
  fix: string;
}

export interface Fact {
  label: string;
  /** Machine-readable value for --json. */
  value: string | number | boolean | null;
  /** Human-readable form for the table, when it differs. */
  display?: string;
}

export interface CheckResult {
  /** Stable key, e.g. 'outbox-table'. */
  check: string;
  title: string;
  status: Status;
  facts: Fact[];
  problems: Problem[];
}

export interface DoctorContext {
  db: SqlExecutor;
  config: Config;
  /** Absent when Temporal cannot be reached; the schedule check reports that. */
  temporal?: Client;
  temporalError?: string;
}

export type Check = (ctx: DoctorContext) => Promise<CheckResult>;

export function result(check: string, title: string, facts: Fact[], problems: Problem[]): CheckResult {
  const status: Status = problems.some((p) => p.severity === 'fail') ? 'fail' : problems.length ? 'warn' : 'ok';
  return { check, title, status, facts, problems };
}
