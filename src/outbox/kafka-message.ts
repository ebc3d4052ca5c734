import { HEADERS } from '../kafka/message-format';
import { encodeCloudEvent } from '../formats/cloudevents/encode';
import type { ResolvedCloudEvents } from '../formats/cloudevents/settings';
import type { CloudEventsMode } from '../config/settings';
import type { PendingRow } from './queries/read-pending-rows';

export interface OutboxKafkaMessage {
  key: string;
  /** The payload's JSON text; a Buffer once framed for the Schema Registry (src/formats/registry). */
  value: string | Buffer;
  headers: Record<string, string>;
}

export type MessageCheck = { ok: true; message: OutboxKafkaMessage; bytes: number } | { ok: false; reason: string };

// Record framing, key/value lengths, header names and the batch header a record shares; generous
// so "fits" here means "fits on the broker" too.
export const RECORD_OVERHEAD_BYTES = 128;

/**
 * Turns one outbox row into the Kafka message of src/kafka/message-format.ts, or says why it can
 * never be published as it is. These reasons are permanent (retrying cannot fix a payload), so
 * the relay parks such rows at once instead of spending attempts on them.
 */
/** The CloudEvents content mode of the row's topic, with the attributes the row does not hold. */
export interface CloudEventsEncoding {
  mode: CloudEventsMode;
  settings: ResolvedCloudEvents;
}

export function toKafkaMessage(row: PendingRow, maxMessageBytes: number, cloudEvents?: CloudEventsEncoding): MessageCheck {
  if (row.payloadKind !== 'object') return { ok: false, reason: `payload must be a JSON object, got ${row.payloadKind}` };
  if (row.eventId === null || row.eventId === '') return { ok: false, reason: 'payload.event_id must be a non-empty string' };
  // The table refuses new ones (migration 0042); rows older than that check still get here.
  if (row.eventType.trim() === '') return { ok: false, reason: 'event_type must not be empty' };
  // Consumers route by the header and read the body: two different types would be handled as
  // one thing by one side and as another by the other.
  if (row.payloadType !== null && row.payloadType !== row.eventType) {
    return { ok: false, reason: `event_type ${JSON.stringify(row.eventType.slice(0, 100))} disagrees with payload.type ${JSON.stringify(row.payloadType.slice(0, 100))}` };
  }
  const key = row.messageKey ?? row.eventId;
  let headers: Record<string, string> = {};
  // Producer-supplied headers first, so ours (the contract) win on a name clash.
  for (const [name, value] of Object.entries(row.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  headers[HEADERS.eventId] = row.eventId;
  headers[HEADERS.eventType] = row.eventType;
  headers[HEADERS.createdAt] = row.createdAt;
  headers[HEADERS.outboxId] = String(row.id);
  let value = row.value;
  // CloudEvents topics (kafka.cloudEvents; src/formats/cloudevents/encode.ts): before the size check, which then counts the envelope.
  if (cloudEvents) ({ value, headers } = encodeCloudEvent(cloudEvents.mode, cloudEvents.settings, { eventId: row.eventId, eventType: row.eventType, createdAt: row.createdAt, key, value, headers }));
  let bytes = RECORD_OVERHEAD_BYTES + Buffer.byteLength(key) + Buffer.byteLength(value);
  for (const [name, value] of Object.entries(headers)) bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 8;
  if (bytes > maxMessageBytes) return { ok: false, reason: `message of ${bytes} bytes exceeds the ${maxMessageBytes}-byte Kafka limit (KAFKA_MAX_MESSAGE_BYTES)` };
  return { ok: true, message: { key, value, headers }, bytes };
}
