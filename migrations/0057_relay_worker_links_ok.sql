-- Since when a relay worker's links have answered every health check (workers/link-health.ts),
-- by the database's clock; NULL while one fails. A shard whose session on a worker timed out
-- leaves that worker out of its placements until it reports its links answering since after the
-- session was placed (src/outbox/relay-avoidance.ts), so a worker whose fault was shorter than its
-- step-aside gets its shards back as soon as it is healthy, and one whose link is still dead does not.
ALTER TABLE temporal_outbox.outbox_relay_workers ADD COLUMN links_ok_since timestamptz;
