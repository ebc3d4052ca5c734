import avro from 'avsc';
import type { RegistrySchemaType } from './client';

/** One schema's way to write a payload into a body and read a body back into the payload. */
export interface SchemaCodec {
  /** The body for this payload, or why the payload does not fit the schema. `text` is the payload's JSON text. */
  write(payload: Record<string, unknown>, text: string): { ok: true; body: Buffer } | { ok: false; reason: string };
  /** The payload a body holds, as plain JSON values (the same object the plain JSON text would give). */
  read(body: Buffer): unknown;
}

export function codecFor(schemaType: RegistrySchemaType, schemaText: string, validate?: (payload: Record<string, unknown>) => string | undefined): SchemaCodec {
  return schemaType === 'AVRO' ? avroCodec(schemaText) : jsonSchemaCodec(validate);
}

function avroCodec(schemaText: string): SchemaCodec {
  const type = avro.Type.forSchema(JSON.parse(schemaText) as avro.Schema);
  return {
    write(payload) {
      const problems: string[] = [];
      // Undeclared fields refused: Avro would drop them silently and the consumer would never see them.
      const fits = type.isValid(payload, {
        noUndeclaredFields: true,
        errorHook: (path, value, at) => {
          if (problems.length < 3) problems.push(`${path.length === 0 ? 'the payload' : path.join('.')} (${describe(value, at)})`);
        },
      });
      if (!fits) return { ok: false, reason: `payload does not fit the Avro schema ${schemaName(type)}: ${problems.join('; ')}` };
      return { ok: true, body: type.toBuffer(payload) };
    },
    read(body) {
      // fromBuffer refuses trailing bytes, so a body of another schema fails rather than half-reads.
      return plain(type.fromBuffer(body));
    },
  };
}

function jsonSchemaCodec(validate?: (payload: Record<string, unknown>) => string | undefined): SchemaCodec {
  return {
    write(payload, text) {
      const problem = validate?.(payload);
      if (problem !== undefined) return { ok: false, reason: `payload does not fit its JSON Schema: ${problem}` };
      return { ok: true, body: Buffer.from(text) };
    },
    read(body) {
      return JSON.parse(body.toString('utf8'));
    },
  };
}

/** avsc reads records into instances of generated classes; a handler gets the plain objects JSON would give. */
function plain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(plain);
  if (Buffer.isBuffer(value)) return value.toString('base64');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = plain(v);
  return out;
}

function schemaName(type: avro.Type): string {
  return type.name ?? type.typeName;
}

function describe(value: unknown, at: avro.Type): string {
  if (value === undefined) return 'missing';
  if (at instanceof avro.types.RecordType && value !== null && typeof value === 'object') {
    const declared = new Set(at.fields.map((f) => f.name));
    const undeclared = Object.keys(value).filter((k) => !declared.has(k));
    if (undeclared.length > 0) return `undeclared field${undeclared.length > 1 ? 's' : ''} ${undeclared.slice(0, 5).join(', ')}`;
  }
  const text = JSON.stringify(value) ?? String(value);
  return `got ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
}
