import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config/env';
import { createPool, databaseTimeouts } from '../db/pool';
import { auditScheduleCheck } from './checks/audit-schedule';
import { consumerLagCheck } from './checks/consumer-lag';
import { inboxTableCheck } from './checks/inbox-table';
import { oddOutboxRowsCheck } from './checks/odd-outbox-rows';
import { outboxTableCheck } from './checks/outbox-table';
import { pendingIndexCheck } from './checks/pending-index';
import { pollPlanCheck } from './checks/poll-plan';
import { retentionScheduleCheck } from './checks/retention-schedule';
import { vacuumHorizonCheck } from './checks/vacuum-horizon';
import { topicRetentionCheck } from './checks/topic-retention';
import type { Check, CheckResult, DoctorContext } from './types';
import { temporalConnectionOptions } from '../temporal/connection-options';
import { databaseUrl } from '../config/resolve';

export const CHECKS: Check[] = [outboxTableCheck, oddOutboxRowsCheck, pendingIndexCheck, pollPlanCheck, vacuumHorizonCheck, inboxTableCheck, consumerLagCheck, topicRetentionCheck, retentionScheduleCheck, auditScheduleCheck];

export interface DoctorReport {
  healthy: boolean;
  database: string;
  temporal: string;
  at: string;
  checks: CheckResult[];
}

/** Runs every check against one context; a check that throws becomes a failed check, not a crash. */
export async function runChecks(ctx: DoctorContext, checks: Check[] = CHECKS): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of checks) {
    try {
      results.push(await check(ctx));
    } catch (err) {
      results.push({
        check: check.name,
        title: check.name,
        status: 'fail',
        facts: [],
        problems: [{ severity: 'fail', message: `the check itself failed: ${(err as Error).message}`, fix: 'see the message; is the database migrated (npx temporal-outbox migrate)?' }],
      });
    }
  }
  return results;
}

/** Connects to the configured database and Temporal, runs every check, and closes what it opened. */
export async function runDoctor(config: Config): Promise<DoctorReport> {
  // The doctor must never hang on a sick database: every statement gets a ceiling.
  const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 2, ...databaseTimeouts(config), statement_timeout: 60_000, application_name: 'outbox-doctor' });
  let connection: Connection | undefined;
  let temporalError: string | undefined;
  try {
    connection = await Connection.connect(temporalConnectionOptions(config, { connectTimeout: 5_000 }));
  } catch (err) {
    temporalError = (err as Error).message;
  }
  try {
    const temporal = connection ? new Client({ connection, namespace: config.temporal.namespace }) : undefined;
    const checks = await runChecks({ db: pool, config, temporal, temporalError });
    return {
      healthy: checks.every((c) => c.status !== 'fail'),
      database: redact(databaseUrl(config)),
      temporal: `${config.temporal.address} (namespace ${config.temporal.namespace})`,
      at: new Date().toISOString(),
      checks,
    };
  } finally {
    await connection?.close();
    await pool.end();
  }
}

/** The report names the database but never its password. */
function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
