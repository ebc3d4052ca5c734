-- The payments service: confirming a payment and enqueueing payment_confirmed happen in one
-- transaction.
CREATE TABLE IF NOT EXISTS payments (
  payment_id    text        PRIMARY KEY,
  account_id    bigint      NOT NULL,
  amount        bigint      NOT NULL CHECK (amount > 0),
  status        text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  confirmed_at  timestamptz
);

GRANT SELECT, INSERT, UPDATE ON payments TO outbox_producer;
