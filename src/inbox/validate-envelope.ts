import { HEADERS } from '../kafka/message-format';
import { decodeCloudEvent } from '../formats/cloudevents/decode';

// What every event must be, whatever its type: a JSON object with a usable event id and a type.
// Each failure has a reason an operator can act on. Hostile content is only ever data: it is
// parked as text and reaches SQL as a bound parameter, never as SQL.

/** A message as the consumer receives it (kafkajs' KafkaMessage, narrowed to what we read). */
export interface RawMessage {
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

export type EnvelopeResult =
  // traceparent: the CloudEvents distributed tracing extension's, for a message with no `traceparent` header.
  | { ok: true; eventId: string; eventType: string; payload: Record<string, unknown>; traceparent?: string }
  | { ok: false; reason: string; eventId?: string };

export const MAX_EVENT_ID_LENGTH = 200;
// Control characters (NUL above all: PostgreSQL text cannot hold it) have no place in an id.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export function validateEnvelope(message: RawMessage): EnvelopeResult {
  // CloudEvents (binary or structured mode; src/formats/cloudevents/decode.ts): the same event, read from its attributes.
  const cloudEvent = decodeCloudEvent(message);
  if (cloudEvent !== undefined) return cloudEvent.ok ? (eventIdProblem(message, cloudEvent.eventId) ?? cloudEvent) : cloudEvent;

  const text = message.value === null ? '' : message.value.toString();
  if (text.trim() === '') return { ok: false, reason: 'empty message: no payload' };

  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `malformed JSON: ${(err as Error).message.slice(0, 200)}` };
  }
  return envelopeOf(payload, message);
}

/** The envelope of a payload already decoded (from JSON text, or by the Schema Registry: src/formats/registry/consumer-decoding.ts). */
export function envelopeOf(payload: unknown, message: RawMessage): EnvelopeResult {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return { ok: false, reason: 'payload is not a JSON object' };
  }
  const p = payload as Record<string, unknown>;

  const eventId = p.event_id;
  if (eventId === undefined || eventId === null || eventId === '') return { ok: false, reason: 'missing event id' };
  if (typeof eventId !== 'string') return { ok: false, reason: 'event id must be a string' };
  const idProblem = eventIdProblem(message, eventId);
  if (idProblem) return idProblem;

  const type = p.type ?? headerText(message, HEADERS.eventType);
  if (type === undefined || type === null || type === '') return { ok: false, eventId, reason: 'missing event type' };
  if (typeof type !== 'string') return { ok: false, eventId, reason: `event type must be a string (got ${quote(type)})` };
  return { ok: true, eventId, eventType: type, payload: p };
}

/** Why an event id (from the payload or a CloudEvent) cannot be used, if it cannot. */
function eventIdProblem(message: RawMessage, eventId: string): EnvelopeResult | undefined {
  if (eventId.length > MAX_EVENT_ID_LENGTH) return { ok: false, reason: `event id longer than ${MAX_EVENT_ID_LENGTH} characters` };
  if (CONTROL_CHARACTERS.test(eventId)) return { ok: false, reason: 'event id contains control characters' };
  const headerId = headerText(message, HEADERS.eventId);
  if (headerId !== undefined && headerId !== eventId) {
    return { ok: false, eventId, reason: 'event id header does not match the payload event id' };
  }
  return undefined;
}

/** A header's (first) value as text; undefined when the message has none. */
export function headerText(message: RawMessage, name: string): string | undefined {
  const raw = message.headers?.[name];
  const first = Array.isArray(raw) ? raw[0] : raw;
  return first === undefined ? undefined : first.toString();
}

/** A short, JSON-quoted rendering of an offending value, safe to put in a reason. */
export function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
