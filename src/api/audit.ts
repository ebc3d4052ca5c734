// Public API: the audit. It runs in the retention worker; create (or update) its Temporal
// Schedule once. The core proves delivery (every published event applied once or parked); a
// service adds its own invariants as checks (defineAuditCheck) its worker runs.
export { ensureAuditSchedule } from '../audit/schedule';
export { defineAuditCheck, type AuditCheck, type AuditCheckContext, type AuditCheckResult } from '../audit/check';
export type { AuditCheckReport, AuditFinding, AuditReport } from '../audit/types';
