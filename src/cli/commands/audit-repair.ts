import type { Command } from 'commander';
import { databaseUrl, loadConfig } from '../../config/env';
import { createPool } from '../../db/pool';
import { auditedConsumers } from '../../audit/audited-consumers';
import { findOnTopicOnly, findRepairs, repairWindow, republishUnapplied, type RepairFindings } from '../../audit/repair';
import { createKafka } from '../../kafka/client';
import { topicEventsSince } from '../../kafka/topic-events-since';

/**
 * `audit repair`: after a PostgreSQL failover that lost transactions, finds every published event
 * no audited consumer applied and puts it back through the relay (src/audit/repair.ts); lists the
 * applied events whose outbox row is gone and the topic's events no table knows, which it cannot
 * repair. Exits 1 while any of those remains.
 */
/** Reading the topic from `since` to its end may take a while on a busy topic; never longer than this. */
const TOPIC_READ_TIMEOUT_MS = 300_000;

export function registerAuditRepair(audit: Command) {
  audit
    .command('repair')
    .description('re-publish every published event no consumer applied (e.g. after a failover lost inbox rows); list applied events with no outbox row, and events on the topic the database no longer knows')
    .option('--since <time>', 'events created from this instant (ISO 8601); default: the audit window (AUDIT_WINDOW_MS before the settle time)')
    .option('--settle-ms <ms>', 'leave out events younger than this (default AUDIT_SETTLE_MS)')
    .option('--no-topic', 'do not read the topic (KAFKA_TOPIC) for published events the database no longer knows')
    .option('--dry-run', 'list what would be re-published, change nothing')
    .option('--json', 'the findings as JSON')
    .action(async (o: { since?: string; settleMs?: string; topic: boolean; dryRun?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 1 });
      try {
        const window = await repairWindow(pool, { since: o.since, windowMs: config.audit.windowMs, settleMs: o.settleMs === undefined ? config.audit.settleMs : Number(o.settleMs) });
        // Older published rows may be deleted by retention: their events would all look lost.
        if (Date.parse(window.since) < Date.now() - config.retention.windowMs) {
          throw new Error(`--since ${window.since} is older than the outbox's retention window (RETENTION_WINDOW_MS ${config.retention.windowMs} ms): its published rows may be deleted, and their events would look lost`);
        }
        const findings: RepairFindings = await findRepairs(pool, { consumers: auditedConsumers(config), window, createdBeforeMarginMs: config.audit.windowMs });
        if (o.topic) {
          const onTopic = await topicEventsSince(createKafka(config, 'outbox-audit-repair'), config.kafka.topic, new Date(window.since), TOPIC_READ_TIMEOUT_MS);
          findings.onTopicOnly = await findOnTopicOnly(pool, onTopic);
        }
        const republished = o.dryRun ? [] : await republishUnapplied(pool, findings);
        print(findings, republished, o);
        // Re-published events are repaired once applied; the other kinds need a person.
        if (findings.appliedWithoutOutboxRow.length > 0 || (findings.onTopicOnly?.length ?? 0) > 0 || (o.dryRun && findings.unapplied.length > 0)) process.exitCode = 1;
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
  if (!f.onTopicOnly) return console.log('the topic was not read (--no-topic)');
  console.log(`on the topic, in no outbox and no inbox (the producer's acknowledged commit is gone; settle each by hand): ${f.onTopicOnly.length}`);
  for (const t of f.onTopicOnly) console.log(`  event ${t.eventId}, partition ${t.partition} offset ${t.offset}, published ${t.publishedAt}`);
}
