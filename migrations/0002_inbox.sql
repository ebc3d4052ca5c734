-- One row per event a consumer has applied. The primary key is what turns a redelivery into
-- a no-op: the insert comes first, in the same transaction as the handler's effect.
CREATE TABLE temporal_outbox.inbox_processed_events (
  consumer      text        NOT NULL DEFAULT 'payments-credit',
  event_id      text        NOT NULL,
  processed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);
CREATE INDEX inbox_processed_events_processed_at_idx ON temporal_outbox.inbox_processed_events (processed_at);

-- Events a consumer could not apply, with the reason; nothing is dropped silently.
CREATE TABLE temporal_outbox.inbox_parked_events (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  consumer        text        NOT NULL,
  topic           text        NOT NULL,
  kafka_partition integer     NOT NULL,
  kafka_offset    bigint      NOT NULL,
  event_id        text,
  reason          text        NOT NULL,
  raw_value       text,
  parked_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (consumer, topic, kafka_partition, kafka_offset)
);
