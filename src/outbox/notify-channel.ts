/** The channel migration 0010's trigger notifies after each committed INSERT into outbox_events. */
export const OUTBOX_NOTIFY_CHANNEL = 'outbox_events_pending';

/**
 * A notification with this payload also asks every relay to read its shard from the beginning
 * at the next poll: rows were made pending again below the relays' bounds (a redrive; an operator
 * who sets published_at back to NULL by hand can send it too:
 * `SELECT pg_notify('outbox_events_pending', 'rescan')`). See docs/vacuum.md.
 */
export const RESCAN_NOTIFY_PAYLOAD = 'rescan';
