import { z } from 'zod';

/** A JSON Schema (draft 2020-12) as plain data: what the AsyncAPI document and the compatibility rules read. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * The standard JSON Schema of an event's payload as a producer writes it (zod's "input" side: a
 * default or a transform is not yet applied). A schema JSON Schema cannot express (a transform's
 * output, a bigint, a custom check) is refused here, when the type is defined, instead of
 * publishing a document that says less than the code checks.
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
