import type { AuditCheckReport, AuditReport, ConsumerAudit, DriftCounts, TopicAudit } from './types';

// Pure functions over an audit report: the drift figures, the UI's current details, the search
// attribute findings. Workflow-safe (no imports beyond types).

/**
 * Drift per kind. A plain function so a metrics exporter can turn the last report into gauges
 * (e.g. outbox_audit_drift{kind="notApplied"}) without knowing the report's shape.
 */
export function driftCounts(consumers: ConsumerAudit[], checks: AuditCheckReport[], topics: TopicAudit[]): DriftCounts {
  const counts: DriftCounts = {
    notApplied: consumers.reduce((n, c) => n + c.notApplied.count, 0),
    appliedWithoutOutboxRow: consumers.reduce((n, c) => n + (c.appliedWithoutOutboxRow?.count ?? 0), 0),
    onTopicOnly: topics.reduce((n, t) => n + t.onTopicOnly.count, 0),
  };
  for (const check of checks) counts[check.name] = check.findings.count;
  return counts;
}

export function hasDrift(counts: DriftCounts): boolean {
  return Object.values(counts).some((n) => n > 0);
}

/** Search attribute values (event:<id>, and the checks' keys such as customer:<id>) that fit the 2 KB a value may take. */
export function findingKeys(report: Pick<AuditReport, 'consumers' | 'checks' | 'topics'>, maxBytes = 1800): string[] {
  const keys = new Set<string>();
  for (const c of report.consumers) for (const x of [...c.notApplied.listed, ...(c.appliedWithoutOutboxRow?.listed ?? [])]) keys.add(`event:${x.eventId}`);
  for (const t of report.topics ?? []) for (const x of t.onTopicOnly.listed) keys.add(`event:${x.eventId}`);
  for (const check of report.checks) for (const f of check.findings.listed) keys.add(f.key);
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
    '| consumer | expected | applied | parked | not applied | applied, no outbox row |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.consumers.map((c) => `| ${c.consumer} | ${c.expected} | ${c.applied} | ${c.parked.count} | ${c.notApplied.count} | ${c.appliedWithoutOutboxRow?.count ?? 0} |`),
    '',
    ...(r.topics ?? []).map((t) => `Topic ${t.topic}: ${t.read} of ${t.inWindow} messages in the window read, ${t.onTopicOnly.count} only on the topic.`),
    '',
    ...r.checks.map((c) => `Check ${c.name} (${c.description}): ${c.checked} checked, ${c.findings.count} found.`),
    '',
  ];
  for (const check of r.checks) for (const f of check.findings.listed) lines.push(`- ${check.name}: ${f.message}`);
  for (const c of r.consumers) {
    for (const x of c.notApplied.listed) lines.push(`- not applied by ${c.consumer}: event \`${x.eventId}\` (outbox id ${x.outboxId}, published ${x.publishedAt})`);
    for (const x of c.parked.listed) lines.push(`- parked in ${c.consumer}'s inbox: event \`${x.eventId}\`: ${x.reason}`);
    for (const x of c.appliedWithoutOutboxRow?.listed ?? []) lines.push(`- applied by ${c.consumer} with no outbox row: event \`${x.eventId}\` (applied ${x.processedAt})`);
  }
  for (const t of r.topics ?? []) for (const x of t.onTopicOnly.listed) lines.push(`- only on topic ${t.topic}: event \`${x.eventId}\` (partition ${x.partition}, offset ${x.offset}, published ${x.publishedAt})`);
  for (const x of r.outbox.parked.listed) lines.push(`- parked in the outbox: id ${x.outboxId} (event \`${x.eventId ?? '?'}\`): ${x.reason}`);
  return lines.join('\n');
}
