-- Where each credit's event sat on Kafka was recorded here for `inbox find`; the library now
-- keeps it on the event's inbox row (its migration 0054), for every handler, and `inbox find`
-- reads it from there. Writing it twice cost every credit three more columns in the consumer's
-- hottest statement, so the ledger keeps only what the balance invariant sums.
ALTER TABLE payments_credit_ledger
  DROP COLUMN IF EXISTS kafka_topic,
  DROP COLUMN IF EXISTS kafka_partition,
  DROP COLUMN IF EXISTS kafka_offset;
