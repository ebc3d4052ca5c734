-- The key of a row inserted without one. The library knows no payload field by name: the service
-- names one when it sets the library up (`migrate --key-field account_id`, src/db/key-field.ts),
-- recorded beside the shard count, and a row inserted with event_key NULL takes that field of
-- its payload as its key, before its shard is computed (a stored generated column is computed
-- after BEFORE triggers). With no field recorded such a row stays keyed by its event id.
--
-- The layout row can now exist before any relay has chosen a shard count (the key field is set at
-- setup), so shard_count may be NULL until the first relay records its own.
ALTER TABLE temporal_outbox.outbox_relay_layout
  ALTER COLUMN shard_count DROP NOT NULL,
  ADD COLUMN key_field text CHECK (key_field <> '');

-- SECURITY DEFINER with a fixed search_path: the trigger runs as the producer, and a producer
-- login granted INSERT alone (not the outbox_producer role) must get its rows keyed all the same.
CREATE FUNCTION temporal_outbox.outbox_key_field() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT key_field FROM temporal_outbox.outbox_relay_layout
$$;

CREATE FUNCTION temporal_outbox.outbox_events_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.event_key := NEW.payload ->> temporal_outbox.outbox_key_field();
  RETURN NEW;
END;
$$;

-- Only rows without a key pay for the lookup: enqueue fills event_key itself.
CREATE TRIGGER outbox_events_key
  BEFORE INSERT ON temporal_outbox.outbox_events
  FOR EACH ROW WHEN (NEW.event_key IS NULL) EXECUTE FUNCTION temporal_outbox.outbox_events_key();

-- The insert notification as in 0052, its body qualified: a database upgraded from the previous
-- release's public layout (src/db/upgrade-from-public.ts) keeps the old unqualified body otherwise.
CREATE OR REPLACE FUNCTION temporal_outbox.outbox_events_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  shards integer;
  payload text;
BEGIN
  IF has_column_privilege('temporal_outbox.outbox_relay_layout', 'shard_count', 'SELECT') THEN
    shards := (SELECT shard_count FROM temporal_outbox.outbox_relay_layout);
  END IF;
  IF shards IS NULL THEN
    PERFORM pg_notify('outbox_events_pending', '');
    RETURN NULL;
  END IF;
  SELECT shards || ':' || string_agg(DISTINCT ((n.shard_hash & 2147483647) % shards)::text, ',')
    INTO payload
    FROM new_rows n;
  IF payload IS NOT NULL THEN
    PERFORM pg_notify('outbox_events_pending', payload);
  END IF;
  RETURN NULL;
END;
$$;

-- Repeated from 0041 for an upgraded database, whose 0041 ran when the tables were in public.
GRANT USAGE ON SCHEMA temporal_outbox TO outbox_producer, outbox_relay, outbox_consumer, outbox_retention;
-- The first relay now fills its shard count into a row setup may have created (relay-layout.ts).
GRANT UPDATE (shard_count, updated_at) ON temporal_outbox.outbox_relay_layout TO outbox_relay;
