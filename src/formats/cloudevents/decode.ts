import { CE_HEADERS, CONTENT_TYPE_HEADER, CONTENT_TYPES, isJsonContentType, SPEC_VERSION } from './attributes';

// A consumer reads three forms of one event: our plain format, CloudEvents binary mode and
// CloudEvents structured mode (JSON), told apart as the Kafka binding says: a `content-type` of
// application/cloudevents… is structured, a `ce_specversion` header is binary, anything else is
// ours. Each form yields the same event: its id, its type and the payload (the event's data), so
// a handler cannot tell them apart. A CloudEvent we cannot read is parked with the reason.

/** A Kafka message as the consumer receives it (what src/inbox/validate-envelope.ts reads, too). */
export interface CloudEventMessage {
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

/** The event, or why it is parked; `traceparent` is the distributed tracing extension's, if any. */
export type CloudEventResult =
  | { ok: true; eventId: string; eventType: string; payload: Record<string, unknown>; traceparent?: string }
  | { ok: false; reason: string; eventId?: string };

type EnvelopeResult = CloudEventResult;
type RawMessage = CloudEventMessage;

/** What the three forms share once decoded: the CloudEvent's attributes that matter here. */
interface Attributes {
  specversion: unknown;
  id: unknown;
  source: unknown;
  type: unknown;
  traceparent?: unknown;
}

/** The event a CloudEvents message carries; undefined when the message is not a CloudEvent. */
export function decodeCloudEvent(message: RawMessage): EnvelopeResult | undefined {
  const contentType = headerText(message, CONTENT_TYPE_HEADER);
  if (contentType !== undefined) {
    const type = contentType.trim().toLowerCase();
    if (type.startsWith(CONTENT_TYPES.batchPrefix)) return { ok: false, reason: `CloudEvents batched mode (${quote(contentType)}) is not read: one event per message` };
    if (type.startsWith(CONTENT_TYPES.structuredPrefix)) return decodeStructured(message, contentType);
  }
  if (headerText(message, CE_HEADERS.specversion) !== undefined) return decodeBinary(message, contentType);
  return undefined;
}

function decodeBinary(message: RawMessage, contentType: string | undefined): EnvelopeResult {
  const attributes: Attributes = {
    specversion: headerText(message, CE_HEADERS.specversion),
    id: headerText(message, CE_HEADERS.id),
    source: headerText(message, CE_HEADERS.source),
    type: headerText(message, CE_HEADERS.type),
    traceparent: headerText(message, 'ce_traceparent'),
  };
  const problem = attributeProblem(attributes, 'header ce_');
  if (problem) return problem;
  if (contentType !== undefined && !isJsonContentType(contentType)) return { ok: false, eventId: attributes.id as string, reason: `CloudEvents data of content type ${quote(contentType)} is not JSON` };
  const text = message.value === null ? '' : message.value.toString();
  if (text.trim() === '') return { ok: false, eventId: attributes.id as string, reason: 'CloudEvents binary mode: empty message, no data' };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, eventId: attributes.id as string, reason: `CloudEvents binary mode: malformed JSON data: ${(err as Error).message.slice(0, 200)}` };
  }
  return withData(message, attributes, data);
}

function decodeStructured(message: RawMessage, contentType: string): EnvelopeResult {
  if (!isJsonContentType(contentType)) return { ok: false, reason: `CloudEvents structured mode in an event format other than JSON (${quote(contentType)}) is not read` };
  const text = message.value === null ? '' : message.value.toString();
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `CloudEvents structured mode: malformed JSON: ${(err as Error).message.slice(0, 200)}` };
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return { ok: false, reason: 'CloudEvents structured mode: the event is not a JSON object' };
  const e = event as Record<string, unknown>;
  const problem = attributeProblem(e as unknown as Attributes, '');
  if (problem) return problem;
  const id = e.id as string;
  if (e.datacontenttype !== undefined && (typeof e.datacontenttype !== 'string' || !isJsonContentType(e.datacontenttype))) {
    return { ok: false, eventId: id, reason: `CloudEvents data of content type ${quote(e.datacontenttype)} is not JSON` };
  }
  let data = e.data;
  if (data === undefined && typeof e.data_base64 === 'string') {
    try {
      data = JSON.parse(Buffer.from(e.data_base64, 'base64').toString('utf8'));
    } catch (err) {
      return { ok: false, eventId: id, reason: `CloudEvents data_base64 is not JSON: ${(err as Error).message.slice(0, 200)}` };
    }
  }
  return withData(message, e as unknown as Attributes, data);
}

/** The first required attribute that is missing or wrong, as a parked reason. */
function attributeProblem(a: Attributes, where: string): EnvelopeResult | undefined {
  const id = typeof a.id === 'string' && a.id !== '' ? a.id : undefined;
  if (a.specversion === undefined) return { ok: false, eventId: id, reason: `CloudEvent without specversion (${where}specversion)` };
  if (a.specversion !== SPEC_VERSION) return { ok: false, eventId: id, reason: `CloudEvents specversion ${quote(a.specversion)} is not supported (only ${SPEC_VERSION})` };
  for (const name of ['id', 'source', 'type'] as const) {
    const value = a[name];
    if (value === undefined || value === null || value === '') return { ok: false, eventId: id, reason: `CloudEvent without ${name} (${where}${name})` };
    if (typeof value !== 'string') return { ok: false, eventId: id, reason: `CloudEvents ${name} must be a string (got ${quote(value)})` };
  }
  return undefined;
}

/** The event once its attributes are good: its data must be the JSON object a handler reads. */
function withData(message: RawMessage, a: Attributes, data: unknown): EnvelopeResult {
  const eventId = a.id as string;
  const eventType = a.type as string;
  if (data === undefined || data === null) return { ok: false, eventId, reason: 'CloudEvent without data' };
  if (typeof data !== 'object' || Array.isArray(data)) return { ok: false, eventId, reason: 'CloudEvents data is not a JSON object' };
  const payload = data as Record<string, unknown>;
  // Our relay writes the payload unchanged as the data: its own id and type must agree.
  if (payload.event_id !== undefined && payload.event_id !== eventId) return { ok: false, eventId, reason: 'CloudEvents id does not match data.event_id' };
  if (payload.type !== undefined && payload.type !== eventType) return { ok: false, eventId, reason: `CloudEvents type ${quote(eventType)} does not match data.type ${quote(payload.type)}` };
  const traceparent = typeof a.traceparent === 'string' && a.traceparent !== '' ? a.traceparent : undefined;
  return { ok: true, eventId, eventType, payload, ...(traceparent === undefined ? {} : { traceparent }) };
}

function headerText(message: RawMessage, name: string): string | undefined {
  const raw = message.headers?.[name];
  const first = Array.isArray(raw) ? raw[0] : raw;
  return first === undefined ? undefined : first.toString();
}

/** A short, JSON-quoted rendering of an offending value, safe to put in a reason. */
function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
