// Public API: the health report of outbox and inbox (what `npx temporal-outbox doctor` prints).
export { runDoctor, type DoctorReport } from '../doctor/run-doctor';
export { formatReport } from '../doctor/format-report';
