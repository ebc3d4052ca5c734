import type { CloudEventsMode } from '../../config/settings';
import { TRACE_HEADERS } from '../../observability/trace-context';
import { ATTRIBUTE_HEADER_PREFIX, ATTRIBUTE_NAME, CE_HEADERS, CONTENT_TYPE_HEADER, CONTENT_TYPES, RELAY_OWNED_ATTRIBUTES, SPEC_VERSION } from './attributes';
import type { ResolvedCloudEvents } from './settings';

/** One outbox event as the relay is about to send it in the plain format. */
export interface PlainMessage {
  eventId: string;
  eventType: string;
  /** The row's created_at, RFC 3339 in UTC: the event's `time`. */
  createdAt: string;
  key: string;
  /** The payload, JSON text, exactly as the row holds it. */
  value: string;
  /** Ours and the producer's, as src/kafka/message-format.ts describes them. */
  headers: Record<string, string>;
}

/**
 * The same event in a CloudEvents content mode. Our own headers stay in both modes: the audit's
 * topic read, the tools and a consumer of an older version know an event by them, and `outbox-id`
 * has no CloudEvents attribute; a CloudEvents reader ignores headers it does not know.
 *
 * Tracing: the Kafka `traceparent` header stays the transport's (the relay's send span replaces
 * it), while the distributed tracing extension's `traceparent` attribute carries the context the
 * event was created in (the enqueue span the row recorded) — what that extension describes.
 */
export function encodeCloudEvent(mode: CloudEventsMode, settings: ResolvedCloudEvents, m: PlainMessage): { value: string; headers: Record<string, string> } {
  const headers = { ...m.headers };
  // A producer may set source, subject, dataschema and extensions per event with `ce_` row headers.
  const given = (name: string): string | undefined => headers[ATTRIBUTE_HEADER_PREFIX + name];
  const optional: Record<string, string | undefined> = {
    subject: given('subject') ?? (settings.subject === 'key' ? m.key : undefined),
    dataschema: given('dataschema') ?? settings.dataSchemas[m.eventType],
    traceparent: given('traceparent') ?? headers[TRACE_HEADERS.traceparent],
    tracestate: given('tracestate') ?? headers[TRACE_HEADERS.tracestate],
  };
  const source = given('source') ?? settings.source;

  if (mode === 'binary') {
    headers[CE_HEADERS.specversion] = SPEC_VERSION;
    headers[CE_HEADERS.id] = m.eventId;
    headers[CE_HEADERS.source] = source;
    headers[CE_HEADERS.type] = m.eventType;
    headers[CE_HEADERS.time] = m.createdAt;
    for (const [name, value] of Object.entries(optional)) if (value !== undefined) headers[ATTRIBUTE_HEADER_PREFIX + name] = value;
    headers[CONTENT_TYPE_HEADER] = CONTENT_TYPES.json;
    return { value: m.value, headers };
  }

  // Structured: the attributes move from `ce_` headers into the envelope; the payload is spliced
  // in as the text it already is (parsing and re-serialising it would cost more than the rest).
  const attributes: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(ATTRIBUTE_HEADER_PREFIX)) continue;
    const attribute = name.slice(ATTRIBUTE_HEADER_PREFIX.length);
    if (ATTRIBUTE_NAME.test(attribute) && !RELAY_OWNED_ATTRIBUTES.has(attribute) && attribute !== 'source') attributes[attribute] = headers[name]!;
    delete headers[name];
  }
  for (const [name, value] of Object.entries(optional)) if (value !== undefined) attributes[name] = value;
  let envelope = `{"specversion":"${SPEC_VERSION}","id":${JSON.stringify(m.eventId)},"source":${JSON.stringify(source)},"type":${JSON.stringify(m.eventType)},"time":${JSON.stringify(m.createdAt)},"datacontenttype":"${CONTENT_TYPES.json}"`;
  for (const [name, value] of Object.entries(attributes)) envelope += `,"${name}":${JSON.stringify(value)}`;
  envelope += `,"data":${m.value}}`;
  headers[CONTENT_TYPE_HEADER] = CONTENT_TYPES.structuredJson;
  return { value: envelope, headers };
}
