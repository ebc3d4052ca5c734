// The wire format between relay and consumers, in one place.
//   key     = the event's key (outbox_events.event_key, else payload.account_id, else event id)
//   value   = the outbox row's payload, as JSON text, unchanged
//   headers = event id, event type, the row's created_at (ISO 8601) and outbox id
export const HEADERS = {
  eventId: 'event-id',
  eventType: 'event-type',
  createdAt: 'created-at',
  outboxId: 'outbox-id',
} as const;
