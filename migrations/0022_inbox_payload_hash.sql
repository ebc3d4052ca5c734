-- Conflicting duplicates (issue 11): a redelivered event id whose payload differs from the one
-- applied is not a duplicate but a conflict, parked with both versions. The inbox row keeps a
-- hash of the applied payload (NULL for rows written before this migration or by the per-event
-- seed path: those redeliveries stay plain duplicates); the parked row keeps the applied
-- version beside the conflicting one when both were delivered in one batch.
ALTER TABLE temporal_outbox.inbox_processed_events ADD COLUMN payload_hash text;
ALTER TABLE temporal_outbox.inbox_parked_events ADD COLUMN applied_value text;
ALTER TABLE temporal_outbox.inbox_parked_events ADD COLUMN applied_payload_hash text;
