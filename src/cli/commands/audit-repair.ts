import type { Command } from 'commander';
import { loadConfig } from '../../config/env';
import { createPool } from '../../db/pool';
import { findRepairs, repairWindow, republishUnapplied, type RepairFindings } from '../../audit/repair';

/**
 * `audit repair`: after a PostgreSQL failover that lost transactions, finds every published event
 * no audited consumer applied and puts it back through the relay (src/audit/repair.ts); lists the
 * applied events whose outbox row is gone, which it cannot repair. Exits 1 while either remains.
 */
export function registerAuditRepair(audit: Command) {
  audit
    .command('repair')
    .description('re-publish every published event no consumer applied (e.g. after a failover lost inbox rows); list applied events with no outbox row')
    .option('--since <time>', 'events created from this instant (ISO 8601); default: the audit window (AUDIT_WINDOW_MS before the settle time)')
    .option('--settle-ms <ms>', 'leave out events younger than this (default AUDIT_SETTLE_MS)')
    .option('--dry-run', 'list what would be re-published, change nothing')
    .option('--json', 'the findings as JSON')
    .action(async (o: { since?: string; settleMs?: string; dryRun?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const pool = createPool(config.database.url, { max: 1 });
      try {
        const window = await repairWindow(pool, { since: o.since, windowMs: config.audit.windowMs, settleMs: o.settleMs === undefined ? config.audit.settleMs : Number(o.settleMs) });
        const findings = await findRepairs(pool, { consumers: config.audit.consumers, window, createdBeforeMarginMs: config.audit.windowMs });
        const republished = o.dryRun ? [] : await republishUnapplied(pool, findings);
        print(findings, republished, o);
        // Re-published events are repaired once applied; the orphans need a person.
        if (findings.appliedWithoutOutboxRow.length > 0 || (o.dryRun && findings.unapplied.length > 0)) process.exitCode = 1;
      } finally {
        await pool.end();
      }
    });
}

function print(f: RepairFindings, republished: number[], o: { dryRun?: boolean; json?: boolean }) {
  if (o.json) return console.log(JSON.stringify({ ...f, republished }, null, 2));
  console.log(`events ${f.window.since} → ${f.window.until}`);
  console.log(`published, never applied: ${f.unapplied.length}`);
  for (const u of f.unapplied) console.log(`  ${u.consumer}: outbox id ${u.outboxId}, event ${u.eventId}, published ${u.publishedAt}`);
  console.log(o.dryRun ? 'dry run: nothing re-published' : `re-published (published_at = NULL): ${republished.length}${republished.length ? ` (outbox ids ${republished.join(', ')})` : ''}`);
  console.log(`applied with no outbox row (the producer's transaction is gone; settle each by hand): ${f.appliedWithoutOutboxRow.length}`);
  for (const a of f.appliedWithoutOutboxRow) console.log(`  ${a.consumer}: event ${a.eventId}, applied ${a.processedAt}`);
}
