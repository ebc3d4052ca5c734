-- The credit handler's ledger: one row per credit actually applied, written in the same
-- transaction that records the event in the inbox and moves the balance. The inbox keeps only
-- event ids (and forgets them after INBOX_RETENTION_MS); the ledger keeps what each credit did,
-- so the example's audit check (examples/payments/balance-check.ts) can prove its invariant:
--   every balance = its opening balance + the sum of its applied credits.
-- It is the account's statement, kept like the balances themselves (retention never deletes it).
CREATE TABLE IF NOT EXISTS payments_credit_ledger (
  consumer        text        NOT NULL,
  event_id        text        NOT NULL,
  account_id      bigint      NOT NULL,
  amount          bigint      NOT NULL,
  -- Where the event sat in Kafka: how an operator finds the applyEventsWorkflow that carried
  -- the event (its id and search attributes name topics, partitions and offsets).
  kafka_topic     text,
  kafka_partition integer,
  kafka_offset    bigint,
  applied_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);
CREATE INDEX IF NOT EXISTS payments_credit_ledger_account_idx ON payments_credit_ledger (account_id);

GRANT SELECT, INSERT ON payments_credit_ledger TO outbox_consumer;
-- The audit runs beside retention, on its worker and role, and reads the ledger for the check.
GRANT SELECT ON accounts, payments_credit_ledger TO outbox_retention;
