-- Rows from plain-SQL producers that the relay cannot handle correctly are refused at INSERT,
-- with the constraint's name as the reason, instead of misbehaving later:
--  * an id above 2^53 - 1 cannot round-trip through JavaScript numbers (the relay would mark a
--    different id than it sent, and re-send the row for ever);
--  * an empty event_type has no meaning to any consumer and cannot be routed.
-- NOT VALID: existing rows are not scanned (instant on a large table); new and updated rows are
-- checked. `doctor` reports pending rows that predate the checks.
ALTER TABLE temporal_outbox.outbox_events
  ADD CONSTRAINT outbox_events_id_fits_javascript CHECK (id BETWEEN 1 AND 9007199254740991) NOT VALID;
ALTER TABLE temporal_outbox.outbox_events
  ADD CONSTRAINT outbox_events_event_type_not_empty CHECK (btrim(event_type) <> '') NOT VALID;
