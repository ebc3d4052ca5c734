-- Events of a type no handler of a consumer knows are not malformed: another consumer may well
-- handle them. With CONSUMER_UNKNOWN_EVENT_TYPES=skip (the default) they are skipped and counted
-- here per consumer and type, so an operator sees what a consumer ignores; =park parks them.
CREATE TABLE temporal_outbox.inbox_skipped_event_types (
  consumer          text        NOT NULL,
  event_type        text        NOT NULL,
  skipped           bigint      NOT NULL,
  first_skipped_at  timestamptz NOT NULL DEFAULT now(),
  last_skipped_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_type)
);
