-- Where each applied event sat on Kafka, on its inbox row: `inbox find --event-id` starts from it
-- to list the applyEventsWorkflow runs that carried the event, whatever the handler. The first
-- delivery's position is kept (a redelivery inserts nothing). Nullable without a default, so
-- adding them rewrites nothing on a populated table; rows written before this migration have no
-- position.
ALTER TABLE temporal_outbox.inbox_processed_events
  ADD COLUMN kafka_topic text,
  ADD COLUMN kafka_partition integer,
  ADD COLUMN kafka_offset bigint;
