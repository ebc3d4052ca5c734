-- Wakes idle relays as soon as new events commit, instead of a fixed poll interval.
-- Statement-level, so a bulk INSERT of 10,000 rows sends one notification, not 10,000; and
-- PostgreSQL delivers it only at COMMIT (never for a rolled-back insert) and folds identical
-- notifications of one transaction into one. The payload is empty: listeners re-read the
-- table, which is the only source of truth (a notification can be missed while a listener
-- reconnects, so relays keep a slow fallback poll as well).
CREATE FUNCTION temporal_outbox.outbox_events_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('outbox_events_pending', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER outbox_events_notify
  AFTER INSERT ON temporal_outbox.outbox_events
  FOR EACH STATEMENT EXECUTE FUNCTION temporal_outbox.outbox_events_notify();
