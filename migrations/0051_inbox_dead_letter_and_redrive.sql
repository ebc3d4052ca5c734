-- Dead letters that never stall a partition, and redrive (issue 11).
--
-- A parked message owed a copy on the dead-letter topic keeps that copy's state here. The row is
-- written first (durable in PostgreSQL), the copy is sent afterwards, and only a copy still
-- 'pending' is ever sent: a redelivered chunk finds its rows already parked and sends nothing
-- twice. A copy Kafka cannot take now (topic missing, broker refusal) stays 'pending' and a
-- later sweep retries it; one Kafka can never take (message too large) or that ran out of
-- attempts becomes 'failed' with the reason. Rows parked without a copy (dead-lettering off,
-- handler refusals, conflicts) have NULL here. The message bytes are kept only until the copy
-- is sent or given up.
ALTER TABLE temporal_outbox.inbox_parked_events
  ADD COLUMN dead_letter_state    text CHECK (dead_letter_state IN ('pending', 'sent', 'failed')),
  -- The topic the copy is owed to, fixed when parked (a sweep by another process sends it there).
  ADD COLUMN dead_letter_topic    text,
  ADD COLUMN dead_letter_key      bytea,
  ADD COLUMN dead_letter_value    bytea,
  -- Header name -> list of base64 values, exactly as the message carried them.
  ADD COLUMN dead_letter_headers  jsonb,
  ADD COLUMN dead_letter_attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN dead_letter_due_at   timestamptz,
  ADD COLUMN dead_letter_sent_at  timestamptz,
  ADD COLUMN dead_letter_error    text;
CREATE INDEX inbox_parked_events_dead_letter_due_idx ON temporal_outbox.inbox_parked_events (dead_letter_due_at)
  WHERE dead_letter_state = 'pending';

-- A handler refusal (unknown account, ...) keeps the event as the handler saw it, so that
-- `outbox inbox redrive` can apply it once the cause is fixed; redriven_at marks a row whose
-- event has since been applied (through the inbox guard: credited once however often redriven).
ALTER TABLE temporal_outbox.inbox_parked_events
  ADD COLUMN event_type   text,
  ADD COLUMN event_data   jsonb,
  ADD COLUMN payload_hash text,
  ADD COLUMN redriven_at  timestamptz;

-- Parked rows are pruned by the retention schedule after PARKED_RETENTION_MS.
CREATE INDEX inbox_parked_events_parked_at_idx ON temporal_outbox.inbox_parked_events (parked_at);

GRANT UPDATE (dead_letter_state, dead_letter_topic, dead_letter_key, dead_letter_value, dead_letter_headers, dead_letter_attempts,
              dead_letter_due_at, dead_letter_sent_at, dead_letter_error, redriven_at)
  ON temporal_outbox.inbox_parked_events TO outbox_consumer;
GRANT DELETE ON temporal_outbox.inbox_parked_events TO outbox_retention;
