-- The relay's shard layout. Every relay checks its shard count against this row before each
-- fetch, so relays started with a different count cannot work overlapping key sets.
CREATE TABLE temporal_outbox.outbox_relay_layout (
  singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  shard_count  integer NOT NULL CHECK (shard_count BETWEEN 1 AND 256),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
