-- Live relay worker processes, so relay shards spread over however many are running with no
-- configuration change (docs/relay.md, "Where shards run"). Each worker keeps its row alive with
-- a heartbeat; a row past expires_at is a worker that stopped heartbeating (killed, hung, cut off
-- from PostgreSQL) and no longer counts. A clean shutdown deletes its row at once.
-- relay_queue is the shared relay task queue the worker serves: two relay deployments on one
-- database (different task queues) never place shards on each other's workers.
CREATE TABLE temporal_outbox.outbox_relay_workers (
  relay_queue  text        NOT NULL,
  worker_id    text        NOT NULL,
  task_queue   text        NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (relay_queue, worker_id)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON temporal_outbox.outbox_relay_workers TO outbox_relay;
