/** The channel migration 0010's trigger notifies after each committed INSERT into outbox_events. */
export const OUTBOX_NOTIFY_CHANNEL = 'outbox_events_pending';
