// The names the CloudEvents Kafka protocol binding (version 1.0) gives things on a Kafka message.
// Binary mode: each attribute is a header `ce_<name>`, the value is the event's data, and the
// `content-type` header is the data's content type. Structured mode: `content-type` names the
// event format and the value is the whole event in it (here JSON, with the data under `data`).

export const SPEC_VERSION = '1.0';

export const CONTENT_TYPE_HEADER = 'content-type';
export const ATTRIBUTE_HEADER_PREFIX = 'ce_';

export const CE_HEADERS = {
  specversion: 'ce_specversion',
  id: 'ce_id',
  source: 'ce_source',
  type: 'ce_type',
  time: 'ce_time',
  subject: 'ce_subject',
  dataschema: 'ce_dataschema',
} as const;

export const CONTENT_TYPES = {
  /** Our data: the outbox payload, JSON text. */
  json: 'application/json',
  /** Structured mode in the JSON event format. */
  structuredJson: 'application/cloudevents+json; charset=UTF-8',
  /** Any structured mode (any event format). */
  structuredPrefix: 'application/cloudevents',
  /** Batched mode: several events in one message. */
  batchPrefix: 'application/cloudevents-batch',
} as const;

/** Attributes the relay sets itself: a row's own `ce_` header cannot replace them. */
export const RELAY_OWNED_ATTRIBUTES: ReadonlySet<string> = new Set(['specversion', 'id', 'type', 'time', 'datacontenttype', 'data', 'data_base64']);

/** An attribute (extension) name as the spec allows: lower-case letters and digits. */
export const ATTRIBUTE_NAME = /^[a-z0-9]{1,20}$/;

/** A data content type whose data is JSON: application/json, text/json, or any `+json` type. */
export function isJsonContentType(contentType: string): boolean {
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}
