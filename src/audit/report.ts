import type { AuditReport, ConsumerAudit, DriftCounts, InvariantAudit } from './types';

// Pure functions over an audit report: the drift figures, the UI's current details, the search
// attribute findings. Workflow-safe (no imports beyond types).

/**
 * Drift per kind. A plain function so a metrics exporter can turn the last report into gauges
 * (e.g. outbox_audit_drift{kind="notApplied"}) without knowing the report's shape.
 */
export function driftCounts(consumers: ConsumerAudit[], invariant: InvariantAudit): DriftCounts {
  const sum = (pick: (c: ConsumerAudit) => number) => consumers.reduce((n, c) => n + pick(c), 0);
  return {
    notApplied: sum((c) => c.notApplied.count),
    inboxRowMissing: sum((c) => c.inboxRowMissing.count),
    appliedDiffers: sum((c) => c.appliedDiffers.count),
    balanceMismatches: invariant.mismatches.count,
  };
}

export function hasDrift(counts: DriftCounts): boolean {
  return Object.values(counts).some((n) => n > 0);
}

/** Search attribute values (event:<id>, account:<id>) that fit the 2 KB a value may take. */
export function findingKeys(report: Pick<AuditReport, 'consumers' | 'invariant'>, maxBytes = 1800): string[] {
  const keys = new Set<string>();
  for (const c of report.consumers) {
    for (const x of c.notApplied.listed) keys.add(`event:${x.eventId}`);
    for (const x of c.inboxRowMissing.listed) keys.add(`event:${x.eventId}`);
    for (const x of c.appliedDiffers.listed) keys.add(`event:${x.eventId}`);
  }
  for (const m of report.invariant.mismatches.listed) keys.add(`account:${m.accountId}`);
  const out: string[] = [];
  let bytes = 2;
  for (const k of keys) {
    bytes += k.length + 3;
    if (bytes > maxBytes) break;
    out.push(k);
  }
  return out;
}

/** Markdown for the run's current details in the Temporal UI. */
export function reportMarkdown(r: AuditReport): string {
  const lines = [
    `**Outbox reconciliation: ${r.drift ? 'DRIFT' : 'clean'}** · events created ${r.window.from} → ${r.window.to}`,
    '',
    `Outbox: ${r.outbox.events} events, ${r.outbox.published} published, ${r.outbox.pending} pending, ${r.outbox.parked.count} parked.`,
    '',
    '| consumer | expected | applied | parked | not applied | inbox row missing | applied differs |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.consumers.map((c) => `| ${c.consumer} | ${c.expected} | ${c.applied} | ${c.parked.count} | ${c.notApplied.count} | ${c.inboxRowMissing.count} | ${c.appliedDiffers.count} |`),
    '',
    `Invariant (${r.invariant.invariant}): ${r.invariant.accountsChecked} accounts, ${r.invariant.mismatches.count} mismatched.`,
    '',
  ];
  for (const m of r.invariant.mismatches.listed) lines.push(`- account \`${m.accountId}\`: balance ${m.balance}, expected ${m.expected} (difference ${m.difference})`);
  for (const c of r.consumers) {
    for (const x of c.notApplied.listed) lines.push(`- not applied by ${c.consumer}: event \`${x.eventId}\` (outbox id ${x.outboxId}, published ${x.publishedAt})`);
    for (const x of c.inboxRowMissing.listed) lines.push(`- inbox row missing in ${c.consumer}: event \`${x.eventId}\` (credited ${x.amount} to account ${x.accountId}; a redelivery would credit it again)`);
    for (const x of c.appliedDiffers.listed) lines.push(`- applied differently by ${c.consumer}: event \`${x.eventId}\` published ${x.published.amount} → ${x.published.accountId}, applied ${x.applied.amount} → ${x.applied.accountId}`);
    for (const x of c.parked.listed) lines.push(`- parked in ${c.consumer}'s inbox: event \`${x.eventId}\`: ${x.reason}`);
  }
  for (const x of r.outbox.parked.listed) lines.push(`- parked in the outbox: id ${x.outboxId} (event \`${x.eventId ?? '?'}\`): ${x.reason}`);
  return lines.join('\n');
}
