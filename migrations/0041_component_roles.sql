-- One role per component, each granted only what its own job needs (least privilege). They are
-- group roles without LOGIN: a deployment creates its login users and grants them one role
-- each (`CREATE ROLE relay_svc LOGIN PASSWORD ...; GRANT outbox_relay TO relay_svc;`), and each
-- worker connects with its own URL (RELAY_DATABASE_URL, CONSUMER_DATABASE_URL,
-- RETENTION_DATABASE_URL). Passwords never appear here. Whoever runs the migrations keeps
-- ownership of the tables; a new table needs its own GRANTs in its own migration.
--
-- Roles are global to the PostgreSQL cluster and the grants are per database, so the roles are
-- created only if missing, tolerating a migration of another database creating them meanwhile.
DO $$
DECLARE
  r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['outbox_producer', 'outbox_relay', 'outbox_consumer', 'outbox_retention'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
      BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', r);
      EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL; -- created concurrently by a migration of another database
      END;
    END IF;
  END LOOP;
END;
$$;

-- Every component reaches the library's tables through its schema.
GRANT USAGE ON SCHEMA temporal_outbox TO outbox_producer, outbox_relay, outbox_consumer, outbox_retention;

-- Producers (any service writing events): insert events and read back the id. A service grants
-- the role what it needs of its own tables itself.
GRANT INSERT ON temporal_outbox.outbox_events TO outbox_producer;
GRANT SELECT (id) ON temporal_outbox.outbox_events TO outbox_producer;

-- The relay: read pending rows, mark them published or parked; agree on the shard layout.
-- It never reads or writes the inbox or a service's tables, and cannot delete a row.
GRANT SELECT ON temporal_outbox.outbox_events TO outbox_relay;
GRANT UPDATE (published_at, parked_at, attempts, last_error) ON temporal_outbox.outbox_events TO outbox_relay;
GRANT SELECT, INSERT ON temporal_outbox.outbox_relay_layout TO outbox_relay;

-- Consumers: the inbox guard (the handlers' own tables are granted by their service); nothing
-- of the outbox.
GRANT SELECT, INSERT ON temporal_outbox.inbox_processed_events TO outbox_consumer;
GRANT SELECT, INSERT ON temporal_outbox.inbox_parked_events TO outbox_consumer;

-- Retention: delete published outbox rows and forgotten inbox ids; nothing else.
GRANT SELECT, DELETE ON temporal_outbox.outbox_events TO outbox_retention;
GRANT SELECT, DELETE ON temporal_outbox.inbox_processed_events TO outbox_retention;
