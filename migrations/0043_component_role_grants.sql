-- Grants for the tables that came after the component roles (0041 grants only what existed
-- then, and says each new table needs its own). Without these a worker running under its role
-- stops at the first statement that touches them.

-- The consumer: handlers' effects and their bookkeeping, all in the inbox transaction.
GRANT SELECT, INSERT, UPDATE ON inbox_skipped_event_types TO outbox_consumer;  -- unknown types counted (upsert)
GRANT DELETE ON inbox_processed_events TO outbox_consumer;                     -- a refused event's inbox row goes before it is parked
GRANT SELECT, INSERT ON payments_credit_ledger TO outbox_consumer;             -- the credit's ledger row
GRANT SELECT, INSERT ON shipments TO outbox_consumer;                          -- the order_shipped example handler

-- The reconciliation audit runs beside retention, on its worker and role: read-only.
GRANT SELECT ON accounts, payments_credit_ledger, inbox_parked_events TO outbox_retention;
