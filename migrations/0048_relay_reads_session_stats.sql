-- The relay worker's vacuum-horizon gauge (outbox/queries/read-horizon-age.ts) reads other
-- sessions' transaction start and xmin in pg_stat_activity, which PostgreSQL shows only to
-- superusers and members of pg_read_all_stats; under its own role the relay would see none and
-- report 0. Granting that role needs its admin option: where the migrating user lacks it (a
-- managed service's non-superuser owner), the gauge stays blind and `doctor`, which runs as the
-- owner, remains the place that names the holder. Nothing else of the relay needs it.
DO $$
BEGIN
  IF pg_has_role('pg_read_all_stats', 'MEMBER WITH ADMIN OPTION') THEN
    GRANT pg_read_all_stats TO outbox_relay;
  ELSE
    RAISE NOTICE 'outbox_relay not granted pg_read_all_stats (the migrating user cannot): the relay''s vacuum-horizon gauge sees only its own sessions';
  END IF;
END;
$$;
