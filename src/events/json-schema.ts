import { z } from 'zod';

/** A JSON Schema (draft 2020-12) as plain data: what the AsyncAPI document and the compatibility rules read. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * The standard JSON Schema of an event's payload as a producer writes it (zod's "input" side: a
 * default or a transform is not yet applied). A type JSON Schema cannot express (a Date, a
 * bigint) is refused here, when the type is defined, rather than published as "anything". A
 * `.refine()` is not refused but is absent from the JSON Schema (zod leaves it out):
 * docs/events.md says to keep such rules in the handler's `check`.
 */
export function payloadJsonSchema(type: string, version: number, schema: z.ZodType): JsonSchema {
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' }) as JsonSchema;
  } catch (err) {
    throw new TypeError(`event ${type} v${version}: its schema has no JSON Schema form (${(err as Error).message})`, { cause: err });
  }
  if (json.type !== 'object') throw new TypeError(`event ${type} v${version}: the schema must describe a JSON object (z.object), got ${JSON.stringify(json.type)}`);
  return json;
}
