-- The relay cuts its batches at a byte budget and parks rows over Kafka's message limit, and it
-- must know a row's size before it loads the body (a backlog of large rows would otherwise
-- be read whole into the worker's heap). The size is the length of the text the relay sends,
-- recorded once at insert by a trigger, so every producer (our API or plain SQL) gets it and
-- the relay reads it from the heap tuple without touching the TOASTed body.
--
-- A column plus a trigger rather than a stored generated column: adding a stored generated
-- column rewrites the whole table under an exclusive lock; this ALTER is instant. Rows written
-- before this migration keep NULL, and the relay measures those on the fly.
ALTER TABLE temporal_outbox.outbox_events ADD COLUMN payload_bytes integer;

CREATE FUNCTION temporal_outbox.outbox_events_payload_bytes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.payload_bytes := octet_length(NEW.payload::text);
  RETURN NEW;
END;
$$;

-- Also on an UPDATE of payload (an operator fixing a parked row), and of payload_bytes itself,
-- so the recorded size can never disagree with the body.
CREATE TRIGGER outbox_events_payload_bytes
  BEFORE INSERT OR UPDATE OF payload, payload_bytes ON temporal_outbox.outbox_events
  FOR EACH ROW EXECUTE FUNCTION temporal_outbox.outbox_events_payload_bytes();
