// The wire format between relay and consumers, in one place.
//   key     = the event's key (outbox_events.event_key, which a row inserted without one takes from
//             the configured key field, migrations/0053), else its event id
//   value   = the outbox row's payload, as JSON text, unchanged
//   headers = event id, event type, the row's created_at (ISO 8601) and outbox id; the producer's
//             own headers from the row; `traceparent` (and `tracestate`) when the event carries a
//             W3C trace context: the relay's publish span's, whose parent is the one the row
//             was enqueued with (src/observability/trace-context.ts)
// A topic in kafka.cloudEvents.topics carries the same event in a CloudEvents content mode as
// well (src/formats/cloudevents/encode.ts, docs/formats.md#cloudevents): binary adds `ce_`
// headers and `content-type`; structured makes the value the CloudEvents JSON envelope. These
// headers stay in both; consumers read all three forms (src/inbox/validate-envelope.ts).
export const HEADERS = {
  eventId: 'event-id',
  eventType: 'event-type',
  createdAt: 'created-at',
  outboxId: 'outbox-id',
} as const;
