import avro from 'avsc';
import type { z } from 'zod';
import { checkCompatibility, type CompatibilityMode } from './compatibility';
import { payloadJsonSchema, type JsonSchema } from './json-schema';

// An event type declared once: its name, its payload schema per version, how it is keyed, and
// how an older version reads as the newer one. Schemas are zod 4 objects (zod is already the
// library's dependency): one declaration gives the static payload type the compiler checks at
// enqueue, the runtime check with zod's own messages, and (z.toJSONSchema) the standard JSON
// Schema that the compatibility rules and the AsyncAPI document read. ajv over hand-written JSON
// Schema would need a second package and a type generator to give the same three.

/** Fields of the event envelope, not of the type's own data: the library fills and checks them. */
export const ENVELOPE_FIELDS = ['event_id', 'type'] as const;

/** One version of a type as the catalog keeps it. */
export interface EventVersion {
  version: number;
  schema: z.ZodObject;
  jsonSchema: JsonSchema;
  /** The version's Avro record, when declared: what a relay registers for an `avro` registry topic. */
  avroSchema?: object;
  /** From the previous version's data to this version's input; absent for the first version. */
  upcast?: (previous: unknown) => unknown;
}

export interface EventDefinition<S extends z.ZodObject = z.ZodObject> {
  readonly kind: 'temporal-outbox.event';
  /** The event type: the row's event_type, the payload's `type`, the `event-type` header. */
  readonly type: string;
  /** This definition's version: what a producer of it writes and a handler of it receives. */
  readonly version: number;
  readonly schema: S;
  readonly compatibility: CompatibilityMode;
  readonly description?: string;
  /** The Kafka key of an event, from its payload (default: the key field set at setup, else the event id). */
  readonly key?: (payload: z.input<S>) => string;
  /** Every version up to this one, oldest first. */
  readonly versions: readonly EventVersion[];
  /**
   * The next version of this type. `upcast` turns this version's (validated) data into the next
   * one's input; a v2 handler reads v1 events through it. The change is checked against this
   * version under the type's compatibility mode and refused (EventCompatibilityError) when it breaks it.
   */
  evolve<N extends z.ZodObject>(next: EvolveSpec<S, N>): EventDefinition<N>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a catalog holds definitions of every schema
export type AnyEventDefinition = EventDefinition<any>;

export interface DefineEventSpec<S extends z.ZodObject> {
  type: string;
  /** Default 1. */
  version?: number;
  schema: S;
  key?: (payload: z.input<S>) => string;
  /** How a new version must relate to the one before it (default 'backward'); docs/events.md. */
  compatibility?: CompatibilityMode;
  description?: string;
  /**
   * This version's Avro record, for topics the Schema Registry carries in Avro (docs/formats.md):
   * every field of the payload, event_id and type included. Absent: such a topic takes its subject's latest schema.
   */
  avroSchema?: object;
}

export interface EvolveSpec<S extends z.ZodObject, N extends z.ZodObject> {
  /** Default: this version + 1. */
  version?: number;
  schema: N;
  upcast?: (previous: z.output<S>) => z.input<N>;
  /** Default: the previous version's key function (give a new one when the field it reads was renamed). */
  key?: (payload: z.input<N>) => string;
  description?: string;
  /** This version's Avro record (see DefineEventSpec.avroSchema); not inherited from the previous version. */
  avroSchema?: object;
}

export class EventCompatibilityError extends Error {
  override name = 'EventCompatibilityError';
}

const TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;
const MODES: readonly CompatibilityMode[] = ['backward', 'forward', 'full', 'none'];

/** Declares an event type (its first version, or the version given). */
export function defineEvent<S extends z.ZodObject>(spec: DefineEventSpec<S>): EventDefinition<S> {
  if (typeof spec.type !== 'string' || !TYPE_PATTERN.test(spec.type)) {
    throw new TypeError(`an event type must be 1-200 characters of letters, digits and . _ : / - (got ${JSON.stringify(spec.type)})`);
  }
  const version = spec.version ?? 1;
  assertVersion(spec.type, version);
  const compatibility = spec.compatibility ?? 'backward';
  if (!MODES.includes(compatibility)) throw new TypeError(`event ${spec.type}: compatibility must be one of ${MODES.join(', ')} (got ${JSON.stringify(compatibility)})`);
  const entry: EventVersion = { version, schema: spec.schema, jsonSchema: payloadJsonSchema(spec.type, version, spec.schema), ...avroOf(spec.type, version, spec.avroSchema) };
  return build(spec.type, compatibility, [entry], spec.key, spec.description);
}

function build<S extends z.ZodObject>(
  type: string,
  compatibility: CompatibilityMode,
  versions: EventVersion[],
  key: ((payload: z.input<S>) => string) | undefined,
  description: string | undefined,
): EventDefinition<S> {
  const current = versions[versions.length - 1]!;
  const definition: EventDefinition<S> = {
    kind: 'temporal-outbox.event',
    type,
    version: current.version,
    schema: current.schema as S,
    compatibility,
    ...(description === undefined ? {} : { description }),
    ...(key === undefined ? {} : { key }),
    versions,
    evolve<N extends z.ZodObject>(next: EvolveSpec<S, N>): EventDefinition<N> {
      const version = next.version ?? current.version + 1;
      assertVersion(type, version);
      if (version <= current.version) throw new EventCompatibilityError(`event ${type}: version ${version} must be greater than ${current.version}`);
      if (next.upcast !== undefined && typeof next.upcast !== 'function') throw new TypeError(`event ${type} v${version}: upcast must be a function`);
      const entry: EventVersion = {
        version,
        schema: next.schema,
        jsonSchema: payloadJsonSchema(type, version, next.schema),
        ...avroOf(type, version, next.avroSchema),
        ...(next.upcast ? { upcast: next.upcast as (previous: unknown) => unknown } : {}),
      };
      const problems = checkCompatibility(current.jsonSchema, entry.jsonSchema, compatibility, { upcast: entry.upcast !== undefined });
      if (problems.length > 0) {
        throw new EventCompatibilityError(`event ${type} v${version} is not ${compatibility} compatible with v${current.version}: ${problems.join('; ')}`);
      }
      const nextKey = next.key ?? (key as unknown as ((payload: z.input<N>) => string) | undefined);
      return build<N>(type, compatibility, [...versions, entry], nextKey, next.description ?? description);
    },
  };
  return Object.freeze(definition);
}

/** A declared Avro schema, checked to be one now (a mistake shows when the type is defined, not at the first send). */
function avroOf(type: string, version: number, avroSchema: object | undefined): { avroSchema?: object } {
  if (avroSchema === undefined) return {};
  let parsed: avro.Type;
  try {
    parsed = avro.Type.forSchema(avroSchema as avro.Schema);
  } catch (err) {
    throw new TypeError(`event ${type} v${version}: avroSchema is no Avro schema (${(err as Error).message})`, { cause: err });
  }
  if (!(parsed instanceof avro.types.RecordType)) throw new TypeError(`event ${type} v${version}: avroSchema must be an Avro record (got ${parsed.typeName})`);
  const fields = new Set(parsed.fields.map((f) => f.name));
  const missing = ['event_id', 'type'].filter((f) => !fields.has(f));
  if (missing.length > 0) throw new TypeError(`event ${type} v${version}: avroSchema must declare the envelope field${missing.length > 1 ? 's' : ''} ${missing.join(' and ')}`);
  return { avroSchema };
}

function assertVersion(type: string, version: number) {
  if (!Number.isSafeInteger(version) || version < 1) throw new TypeError(`event ${type}: version must be a positive integer (got ${JSON.stringify(version)})`);
}

export function isEventDefinition(value: unknown): value is AnyEventDefinition {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'temporal-outbox.event';
}
