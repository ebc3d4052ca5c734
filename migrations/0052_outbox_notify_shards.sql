-- The insert notification names the relay shards that have new rows, as '<shard count>:<i>,<j>'
-- under the layout in outbox_relay_layout, so a worker wakes only those shards' idle waits. With
-- the 0010 payload every commit woke every idle shard of every relay worker to poll its part of
-- the index, and at a steady trickle of small transactions those polls were most of
-- PostgreSQL's transactions (docs/relay.md, "Waking only the shards with new rows").
-- Still one notification per statement, still delivered only at COMMIT. With no layout recorded
-- yet (no relay has started) the payload stays empty, which wakes every shard, as do a rescan and
-- a layout that differs from the waiter's. The shards are computed as the relay's poll computes
-- them (fetch-pending-ids.ts), from the statement's rows only: a bulk insert of 10,000 rows reads
-- its 10,000 shard hashes once more, in memory.
CREATE OR REPLACE FUNCTION temporal_outbox.outbox_events_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  shards integer;
  payload text;
BEGIN
  -- A producer login granted INSERT directly rather than the outbox_producer role (as before this
  -- migration) cannot read the layout: its inserts keep working and wake every shard, as before.
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
  -- An INSERT … SELECT of no rows: nothing to wake.
  IF payload IS NOT NULL THEN
    PERFORM pg_notify('outbox_events_pending', payload);
  END IF;
  RETURN NULL;
END;
$$;

DROP TRIGGER outbox_events_notify ON temporal_outbox.outbox_events;
CREATE TRIGGER outbox_events_notify
  AFTER INSERT ON temporal_outbox.outbox_events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION temporal_outbox.outbox_events_notify();

-- The trigger runs as the producer: it reads the shard count (and nothing else of the layout).
-- A producer login of your own that is not a member of outbox_producer needs this grant too for
-- its inserts to wake only their shards (without it they wake all, as with 0010).
GRANT SELECT (shard_count) ON temporal_outbox.outbox_relay_layout TO outbox_producer;
