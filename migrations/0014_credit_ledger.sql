-- The payments handler's ledger: one row per credit actually applied, written in the same
-- transaction that records the event in the inbox and moves the balance. The inbox keeps only
-- event ids (and forgets them after INBOX_RETENTION_MS); the ledger keeps what each credit did,
-- so the reconciliation audit can prove the handler's invariant:
--   every balance = its opening balance + the sum of its applied credits.
-- It is the account's statement, kept like the balances themselves (retention never deletes it).
CREATE TABLE payments_credit_ledger (
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
CREATE INDEX payments_credit_ledger_account_idx ON payments_credit_ledger (account_id);

-- The balance an account had before any ledgered credit: its balance when created, or (for
-- accounts older than this migration) its balance now, since credits before it were not ledgered.
ALTER TABLE accounts ADD COLUMN opening_balance bigint;
UPDATE accounts SET opening_balance = balance;
ALTER TABLE accounts ALTER COLUMN opening_balance SET NOT NULL;

CREATE FUNCTION accounts_opening_balance() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.opening_balance := coalesce(NEW.opening_balance, NEW.balance);
  RETURN NEW;
END;
$$;

CREATE TRIGGER accounts_opening_balance
  BEFORE INSERT ON accounts
  FOR EACH ROW EXECUTE FUNCTION accounts_opening_balance();
