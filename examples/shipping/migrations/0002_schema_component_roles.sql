-- As the payments example's 0004: the library's schema-named consumer role (its migration 0056)
-- gets what 0001 granted to the cluster-wide outbox_consumer of earlier releases.
GRANT SELECT, INSERT ON shipments TO temporal_outbox_consumer;
