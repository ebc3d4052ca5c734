-- The library's component roles named for its schema (its migration 0056: temporal_outbox_consumer,
-- ...) get what 0001-0003 granted to the cluster-wide roles of earlier releases (outbox_consumer,
-- ...), so a worker login holding only its schema's role works the example's tables. The example
-- keeps the library in its default schema, temporal_outbox.
GRANT SELECT, INSERT, UPDATE ON payments TO temporal_outbox_producer;
GRANT SELECT, UPDATE (balance, updated_at) ON accounts TO temporal_outbox_consumer;
GRANT SELECT, INSERT ON payments_credit_ledger TO temporal_outbox_consumer;
GRANT SELECT ON accounts, payments_credit_ledger TO temporal_outbox_retention;
