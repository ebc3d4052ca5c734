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
  // The caller's own object (toKafkaMessage builds it per message): changed in place, not copied.
  const headers = m.headers;
  // A producer may set source, subject, dataschema and extensions per event with `ce_` row headers.
  const source = headers[CE_HEADERS.source] ?? settings.source;
  const subject = headers[CE_HEADERS.subject] ?? (settings.subject === 'key' ? m.key : undefined);
  const dataschema = headers[CE_HEADERS.dataschema] ?? settings.dataSchemas[m.eventType];
  const traceparent = headers.ce_traceparent ?? headers[TRACE_HEADERS.traceparent];
  const tracestate = headers.ce_tracestate ?? headers[TRACE_HEADERS.tracestate];

  if (mode === 'binary') {
    headers[CE_HEADERS.specversion] = SPEC_VERSION;
    headers[CE_HEADERS.id] = m.eventId;
    headers[CE_HEADERS.source] = source;
    headers[CE_HEADERS.type] = m.eventType;
    headers[CE_HEADERS.time] = m.createdAt;
    if (subject !== undefined) headers[CE_HEADERS.subject] = subject;
    if (dataschema !== undefined) headers[CE_HEADERS.dataschema] = dataschema;
    if (traceparent !== undefined) headers.ce_traceparent = traceparent;
    if (tracestate !== undefined) headers.ce_tracestate = tracestate;
    headers[CONTENT_TYPE_HEADER] = CONTENT_TYPES.json;
    return { value: m.value, headers };
  }

  // Structured: the attributes move from `ce_` headers into the envelope; the payload is spliced
  // in as the text it already is (parsing and re-serialising it would cost more than the rest).
  let envelope = `{"specversion":"${SPEC_VERSION}","id":${JSON.stringify(m.eventId)},"source":${JSON.stringify(source)},"type":${JSON.stringify(m.eventType)},"time":${JSON.stringify(m.createdAt)},"datacontenttype":"${CONTENT_TYPES.json}"`;
  if (subject !== undefined) envelope += `,"subject":${JSON.stringify(subject)}`;
  if (dataschema !== undefined) envelope += `,"dataschema":${JSON.stringify(dataschema)}`;
  if (traceparent !== undefined) envelope += `,"traceparent":${JSON.stringify(traceparent)}`;
  if (tracestate !== undefined) envelope += `,"tracestate":${JSON.stringify(tracestate)}`;
  for (const name in headers) {
    if (!name.startsWith(ATTRIBUTE_HEADER_PREFIX)) continue;
    const attribute = name.slice(ATTRIBUTE_HEADER_PREFIX.length);
    if (ATTRIBUTE_NAME.test(attribute) && !SET_HERE.has(attribute)) envelope += `,"${attribute}":${JSON.stringify(headers[name])}`;
    delete headers[name];
  }
  envelope += `,"data":${m.value}}`;
  headers[CONTENT_TYPE_HEADER] = CONTENT_TYPES.structuredJson;
  return { value: envelope, headers };
}

/** Attributes a structured envelope gets from above, never a second time from a `ce_` header. */
const SET_HERE: ReadonlySet<string> = new Set([...RELAY_OWNED_ATTRIBUTES, 'source', 'subject', 'dataschema', 'traceparent', 'tracestate']);
