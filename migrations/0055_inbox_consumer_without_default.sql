-- The inbox's consumer column took the payments example's inbox name by default (0002). Each
-- consumer names its inbox (consumer.inboxName) and the library writes it on every row, so the
-- default served only hand-written inserts, and put them in the example's inbox. Without it such
-- an insert fails on NOT NULL instead of landing in an inbox nobody chose.
ALTER TABLE temporal_outbox.inbox_processed_events ALTER COLUMN consumer DROP DEFAULT;
