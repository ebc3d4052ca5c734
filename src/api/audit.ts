// Public API: the audit. It runs in the retention worker; create (or update) its
// Temporal Schedule once.
export { ensureAuditSchedule } from '../audit/schedule';
