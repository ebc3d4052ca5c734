// The schemas a service declares for its event types, per type and (optionally) per topic: what the
// relay registers in the Schema Registry (or finds there already) before it encodes a type.
// This is the minimal shape the registry needs; typed event definitions supply it.

export interface EventSchema {
  eventType: string;
  /**
   * The type's version: the relay encodes a row with the schema of the version its event-version
   * header names (no header: the type's first version), the highest one for a version not declared.
   * Unset: the schema of every version.
   */
  version?: number;
  /** Only for this topic; unset: whichever topic the type is routed to. */
  topic?: string;
  /** An Avro schema (object or its JSON text): used on topics whose format is `avro`. */
  avroSchema?: object | string;
  /** A JSON Schema: used on topics whose format is `json-schema`. */
  jsonSchema?: object;
  /**
   * Checks a payload against jsonSchema and says what is wrong (undefined: it fits). The registry
   * frames JSON Schema values without checking them itself; the type's definition knows how.
   */
  validate?: (payload: Record<string, unknown>) => string | undefined;
}

export class SchemaCatalog {
  private readonly schemas: EventSchema[] = [];

  constructor(schemas: readonly EventSchema[] = []) {
    for (const s of schemas) this.register(s);
  }

  /** Declares a type's schema; the same type, version and topic twice is a mistake, refused. */
  register(schema: EventSchema): this {
    if (schema.avroSchema === undefined && schema.jsonSchema === undefined) throw new Error(`event type ${schema.eventType}: give an avroSchema or a jsonSchema`);
    const clash = this.schemas.find((s) => s.eventType === schema.eventType && s.version === schema.version && s.topic === schema.topic);
    if (clash) throw new Error(`event type ${schema.eventType}${schema.version === undefined ? '' : ` v${schema.version}`} already has a schema${schema.topic === undefined ? '' : ` for topic ${schema.topic}`}`);
    this.schemas.push(schema);
    return this;
  }

  /**
   * The schema a row written as `written` (its event-version header; undefined: none, the type's
   * first version) is encoded with: that version's, else the highest declared (a version newer
   * than the catalog knows). A topic's own before a general one.
   */
  forWritten(topic: string, eventType: string, format: 'avro' | 'json-schema', written: number | undefined): EventSchema | undefined {
    const versions = this.schemas.filter((s) => s.eventType === eventType && s.version !== undefined).map((s) => s.version!);
    const version = written ?? (versions.length > 0 ? Math.min(...versions) : undefined);
    return (version === undefined ? undefined : this.find(topic, eventType, format, version)) ?? this.find(topic, eventType, format);
  }

  /** The schema for the type on this topic in this format: a topic's own before a general one, then the highest version (or the one asked for). */
  find(topic: string, eventType: string, format: 'avro' | 'json-schema', version?: number): EventSchema | undefined {
    const fits = (s: EventSchema) =>
      s.eventType === eventType && (s.topic === undefined || s.topic === topic) && (version === undefined || s.version === version) && (format === 'avro' ? s.avroSchema !== undefined : s.jsonSchema !== undefined);
    const candidates = this.schemas.filter(fits);
    candidates.sort((a, b) => Number(b.topic !== undefined) - Number(a.topic !== undefined) || (b.version ?? 0) - (a.version ?? 0));
    return candidates[0];
  }
}
