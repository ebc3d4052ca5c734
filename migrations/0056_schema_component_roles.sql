-- Component roles named for the library's schema: <schema>_producer, <schema>_relay,
-- <schema>_consumer, <schema>_retention. 0041's roles (outbox_producer, ...) are cluster-wide
-- names: two outboxes in different schemas of one cluster shared them, so a login granted one
-- schema's relay role could work the other's, and a role of that name a service already had was
-- taken over. A login is granted the role of the schema it works on (docs/upgrading.md).
--
-- Each new role gets exactly what 0041's role holds on this schema's objects, copied from the
-- catalogs, so the two stay equal however the grants grew (0041, 0043, 0050-0053). 0041's roles
-- keep theirs: a deployment whose logins hold them keeps working, on any database, whatever the
-- cluster's other databases do; docs/upgrading.md says how to move the logins and then revoke.
--
-- A role of the new name that this library did not create (its comment says who did) stops the
-- migration: taking it over would hand the schema to whoever holds it. One created by the same
-- migration in another database (same schema name, same cluster) is shared, as the name says.
DO $$
DECLARE
  s         text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'temporal_outbox.outbox_events'::regclass);
  component text;
  role_name text;
  old_name  text;
  marker    text;
  old_oid   oid;
  g         record;
BEGIN
  IF length(s) > 53 THEN
    RAISE EXCEPTION 'schema % is too long for its component roles (%_retention must fit PostgreSQL''s 63 characters): choose a name of at most 53', s, s;
  END IF;
  FOREACH component IN ARRAY ARRAY['producer', 'relay', 'consumer', 'retention'] LOOP
    role_name := s || '_' || component;
    old_name := 'outbox_' || component;
    marker := format('temporal-outbox: the %s role of schema %s', component, s);
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role_name) THEN
      IF shobj_description((SELECT oid FROM pg_roles WHERE rolname = role_name), 'pg_authid') IS DISTINCT FROM marker THEN
        RAISE EXCEPTION 'role % exists and temporal-outbox did not create it: rename or drop it, or put the library in another schema (OUTBOX_SCHEMA)', role_name;
      END IF;
    ELSE
      BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', role_name);
        EXECUTE format('COMMENT ON ROLE %I IS %L', role_name, marker);
      EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL; -- created concurrently by this migration in another database, which comments it
      END;
    END IF;

    old_oid := (SELECT oid FROM pg_roles WHERE rolname = old_name);
    CONTINUE WHEN old_oid IS NULL;

    -- The schema itself.
    FOR g IN SELECT a.privilege_type FROM pg_namespace n, aclexplode(n.nspacl) a WHERE n.nspname = s AND a.grantee = old_oid LOOP
      EXECUTE format('GRANT %s ON SCHEMA %I TO %I', g.privilege_type, s, role_name);
    END LOOP;
    -- Tables and sequences.
    FOR g IN
      SELECT c.relname, CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind, a.privilege_type
        FROM pg_class c, aclexplode(c.relacl) a
       WHERE c.relnamespace = s::regnamespace AND a.grantee = old_oid
    LOOP
      EXECUTE format('GRANT %s ON %s %I.%I TO %I', g.privilege_type, g.kind, s, g.relname, role_name);
    END LOOP;
    -- Columns (e.g. the relay may UPDATE only published_at, parked_at, attempts, last_error).
    FOR g IN
      SELECT c.relname, t.attname, a.privilege_type
        FROM pg_class c JOIN pg_attribute t ON t.attrelid = c.oid, aclexplode(t.attacl) a
       WHERE c.relnamespace = s::regnamespace AND a.grantee = old_oid
    LOOP
      EXECUTE format('GRANT %s (%I) ON TABLE %I.%I TO %I', g.privilege_type, g.attname, s, g.relname, role_name);
    END LOOP;
    -- Functions.
    FOR g IN SELECT p.oid::regprocedure AS fn, a.privilege_type FROM pg_proc p, aclexplode(p.proacl) a WHERE p.pronamespace = s::regnamespace AND a.grantee = old_oid LOOP
      EXECUTE format('GRANT %s ON FUNCTION %s TO %I', g.privilege_type, g.fn, role_name);
    END LOOP;
  END LOOP;

  -- The relay's vacuum-horizon gauge reads pg_stat_activity (0048 says why), where the migrating
  -- user may grant it.
  IF pg_has_role('pg_read_all_stats', 'MEMBER WITH ADMIN OPTION') THEN
    EXECUTE format('GRANT pg_read_all_stats TO %I', s || '_relay');
  END IF;
END;
$$;
