-- Grants for the tables that came after the component roles (0041 grants only what existed
-- then, and says each new table needs its own). Without these a worker running under its role
-- stops at the first statement that touches them.

-- The consumer: the handlers' bookkeeping, in the inbox transaction.
GRANT SELECT, INSERT, UPDATE ON temporal_outbox.inbox_skipped_event_types TO outbox_consumer;  -- unknown types counted (upsert)
GRANT DELETE ON temporal_outbox.inbox_processed_events TO outbox_consumer;                     -- a refused event's inbox row goes before it is parked

-- The reconciliation audit runs beside retention, on its worker and role: read-only.
GRANT SELECT ON temporal_outbox.inbox_parked_events TO outbox_retention;
