import { SchemaRegistryClient } from './client';
import { codecFor, type SchemaCodec } from './codecs';
import type { SchemaRegistrySettings } from './settings';

/**
 * The consumer's side: reads a framed value with the schema its id names. Ids never change
 * meaning, so each is fetched once per process and kept; a failed fetch is forgotten and asked
 * again with the next chunk.
 */
export class RegistryDecoder {
  private readonly codecs = new Map<number, Promise<SchemaCodec>>();

  constructor(
    readonly settings: Pick<SchemaRegistrySettings, 'url' | 'requestTimeoutMs' | 'username' | 'password'>,
    private readonly client = new SchemaRegistryClient(settings),
  ) {}

  /** The codec of schema `id`; throws RegistryUnavailableError (transient) or RegistryRefusedError (an id the registry does not know). */
  codecFor(id: number): Promise<SchemaCodec> {
    let codec = this.codecs.get(id);
    if (codec === undefined) {
      codec = this.client.byId(id).then((s) => codecFor(s.schemaType, s.schema));
      codec.catch(() => this.codecs.delete(id));
      this.codecs.set(id, codec);
    }
    return codec;
  }
}
