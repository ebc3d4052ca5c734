-- The example service's own tables, in its own schema (public), applied by its own setup with its
-- own ledger (examples/migrate.ts). IF NOT EXISTS throughout: a database upgraded from the release
-- whose library migrations created these tables keeps them, rows and all.
CREATE TABLE IF NOT EXISTS accounts (
  account_id       bigint PRIMARY KEY,
  -- Minor units (cents): credits are exact integers, never floats.
  balance          bigint      NOT NULL DEFAULT 0,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  -- The balance an account had before any ledgered credit (0003): its balance when created.
  opening_balance  bigint      NOT NULL
);

CREATE OR REPLACE FUNCTION accounts_opening_balance() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.opening_balance := coalesce(NEW.opening_balance, NEW.balance);
  RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER accounts_opening_balance
  BEFORE INSERT ON accounts
  FOR EACH ROW EXECUTE FUNCTION accounts_opening_balance();

-- The credit handler runs under the library's consumer role.
GRANT SELECT, UPDATE (balance, updated_at) ON accounts TO outbox_consumer;
