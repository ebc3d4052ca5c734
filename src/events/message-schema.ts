import { z } from 'zod';
import type { EventVersion } from './define-event';

// The JSON Schema of a whole message value of one version: the version's data with the envelope
// fields (event_id, type) the library adds, in draft-07, the dialect AsyncAPI documents and
// Confluent-compatible registries read. One definition for both, so the AsyncAPI document and the
// schema the relay registers describe the same value.

type Doc = Record<string, unknown>;

/** The version's payload as it travels: its JSON Schema with the envelope fields added. */
export function messagePayloadSchema(type: string, v: EventVersion): Doc {
  const schema = z.toJSONSchema(v.schema, { io: 'input', target: 'draft-7' }) as Doc;
  delete schema.$schema;
  const properties = { ...envelopeProperties(type), ...(schema.properties as Doc) };
  const required = ['event_id', ...((schema.required as string[] | undefined) ?? [])];
  return { ...schema, properties, required };
}

/** The envelope fields every event of the type carries. */
export function envelopeProperties(type: string): Doc {
  return { event_id: { type: 'string', minLength: 1, maxLength: 200 }, type: { type: 'string', const: type } };
}
