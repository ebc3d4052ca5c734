import type { DoctorReport } from './run-doctor';
import type { Status } from './types';

const MARK: Record<Status, string> = { ok: 'OK  ', warn: 'WARN', fail: 'FAIL' };

/** The report as a person reads it: one table per check, then every problem with its fix. */
export function formatReport(report: DoctorReport): string {
  const out: string[] = [`outbox doctor  ${report.at}`, `database ${report.database}`, `temporal ${report.temporal}`, ''];
  for (const check of report.checks) {
    out.push(`[${MARK[check.status]}] ${check.title}`);
    const width = Math.max(0, ...check.facts.map((f) => f.label.length));
    for (const fact of check.facts) out.push(`    ${fact.label.padEnd(width)}  ${fact.display ?? String(fact.value)}`);
    out.push('');
  }
  const problems = report.checks.flatMap((c) => c.problems.map((p) => ({ ...p, check: c.title })));
  if (problems.length === 0) {
    out.push('healthy: nothing to fix');
  } else {
    out.push(`${problems.length} problem${problems.length === 1 ? '' : 's'}:`);
    problems.forEach((p, i) => {
      out.push(`  ${i + 1}. [${MARK[p.severity].trim()}] ${p.check}: ${p.message}`);
      out.push(`     fix: ${p.fix}`);
    });
    out.push('', report.healthy ? 'no failures (warnings only)' : 'UNHEALTHY: fix the FAIL items above');
  }
  return out.join('\n') + '\n';
}
