import type { SchemaCatalog } from './catalog';
import { RegistryRefusedError, SchemaRegistryClient, type RegistrySchemaType } from './client';
import { codecFor, type SchemaCodec } from './codecs';
import type { RegistryFormat, SchemaRegistrySettings } from './settings';
import { recordNameOf, subjectFor } from './subjects';
import { frameValue } from './wire-format';

const CONFLICT_ATTEMPTS = 3;
const CONFLICT_PAUSE_MS = 200;

/** How the relay writes one event type on one topic: the subject, the schema's id, the codec. */
export interface RegistryWriter {
  subject: string;
  schemaId: number;
  codec: SchemaCodec;
}

export type EncodeResult = { ok: true; value: Buffer } | { ok: false; reason: string };

/**
 * The relay's side. Per topic, event type and version it registers the catalog's schema (or, for a type the
 * catalog does not know, takes the subject's latest version) once, then encodes every event of
 * that pair from memory: the hot path makes no registry call. A failed lookup is forgotten, so
 * the next batch asks again.
 */
export class RegistryEncoder {
  private readonly writers = new Map<string, Promise<RegistryWriter>>();
  /** The last registration this process started: the next one waits for it. */
  private registering: Promise<unknown> = Promise.resolve();

  constructor(
    readonly settings: SchemaRegistrySettings,
    private readonly catalog?: SchemaCatalog,
    private readonly client = new SchemaRegistryClient(settings),
  ) {}

  /** The format of this topic's values, or undefined when they stay plain JSON. */
  formatOf(topic: string): RegistryFormat | undefined {
    return this.settings.topics[topic];
  }

  /**
   * The writer for the type on the topic, for rows written as `version` (their event-version
   * header; undefined: none); throws RegistryUnavailableError (transient) or RegistryRefusedError (permanent).
   */
  writerFor(topic: string, eventType: string, format: RegistryFormat, version?: number): Promise<RegistryWriter> {
    const key = `${topic}\u0000${eventType}\u0000${version ?? ''}`;
    let writer = this.writers.get(key);
    if (writer === undefined) {
      writer = this.resolveWriter(topic, eventType, format, version);
      writer.catch(() => this.writers.delete(key));
      this.writers.set(key, writer);
    }
    return writer;
  }

  /** The framed value for this payload, or why the payload cannot be written with the writer's schema. */
  encode(writer: RegistryWriter, payload: Record<string, unknown>, text: string): EncodeResult {
    const written = writer.codec.write(payload, text);
    if (!written.ok) return { ok: false, reason: `${written.reason} (subject ${writer.subject}, schema id ${writer.schemaId})` };
    return { ok: true, value: frameValue(writer.schemaId, written.body) };
  }

  /**
   * This process's registrations one at a time: Apicurio (on H2) refuses some of the
   * registrations that race it, under one subject or several (409, "already exists"), which
   * would park the rows of a type or version. They are rare (one per topic, type and version per
   * process), so a queue costs nothing that matters. A 409 is asked again twice, 200 ms apart, for
   * a race with another process: a schema a subject truly refuses (incompatible) is refused again.
   */
  private registerInTurn(subject: string, text: string, schemaType: RegistrySchemaType): Promise<number> {
    const turn = this.registering.catch(() => undefined).then(() => this.registerRetryingConflicts(subject, text, schemaType));
    this.registering = turn;
    return turn;
  }

  private async registerRetryingConflicts(subject: string, text: string, schemaType: RegistrySchemaType): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.register(subject, text, schemaType);
      } catch (err) {
        if (!(err instanceof RegistryRefusedError && err.status === 409) || attempt === CONFLICT_ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, CONFLICT_PAUSE_MS));
      }
    }
  }

  private async resolveWriter(topic: string, eventType: string, format: RegistryFormat, version: number | undefined): Promise<RegistryWriter> {
    const schemaType: RegistrySchemaType = format === 'avro' ? 'AVRO' : 'JSON';
    const declared = this.catalog?.forWritten(topic, eventType, format, version);
    if (declared !== undefined) {
      const schema = format === 'avro' ? declared.avroSchema! : declared.jsonSchema!;
      const text = typeof schema === 'string' ? schema : JSON.stringify(schema);
      const subject = subjectFor(this.settings.subjectNaming, topic, recordNameOf(typeof schema === 'string' ? JSON.parse(schema) : schema, eventType));
      const schemaId = await this.registerInTurn(subject, text, schemaType);
      return { subject, schemaId, codec: codecFor(schemaType, text, declared.validate) };
    }
    // Not declared in code: the schema a deployment step registered under the subject.
    const subject = subjectFor(this.settings.subjectNaming, topic, eventType);
    const latest = await this.client.latest(subject);
    if (latest.schemaType !== schemaType) {
      throw new RegistryRefusedError(`subject ${subject} holds a ${latest.schemaType} schema but topic ${topic} is configured as ${format}`, 0);
    }
    return { subject, schemaId: latest.id, codec: codecFor(schemaType, latest.schema) };
  }
}
