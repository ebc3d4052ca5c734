-- The second example consumer: an order_shipped event records the order's shipment. One shipment
-- per order: a second, different order_shipped event for the same order violates the key and is
-- parked with that reason instead of being applied. IF NOT EXISTS: a database upgraded from the
-- release whose library migrations created this table keeps it.
CREATE TABLE IF NOT EXISTS shipments (
  order_id         text        PRIMARY KEY,
  carrier          text        NOT NULL,
  tracking_number  text        NOT NULL,
  event_id         text        NOT NULL,
  shipped_at       timestamptz NOT NULL,
  recorded_at      timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT ON shipments TO outbox_consumer;
