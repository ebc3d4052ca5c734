import type { Config } from '../../config/resolve';
import type { SchemaCatalog } from './catalog';
import { RegistryDecoder } from './decoder';
import { RegistryEncoder } from './encoder';

export { SchemaCatalog, type EventSchema } from './catalog';
export { schemaCatalogFromEvents } from './event-schemas';
export { SchemaRegistryClient, RegistryRefusedError, RegistryUnavailableError, type RegisteredSchema, type RegistrySchemaType } from './client';
export { RegistryDecoder } from './decoder';
export { RegistryEncoder } from './encoder';
export type { RegistryFormat, SchemaRegistryOptions, SchemaRegistrySettings, SubjectNaming } from './settings';
export { subjectFor } from './subjects';
export { frameValue, isFramed, unframeValue, MAGIC_BYTE } from './wire-format';

/** The relay's encoder when kafka.schemaRegistry is configured; `catalog` holds the schemas declared in code. */
export function registryEncoderFromConfig(config: Config, catalog?: SchemaCatalog): RegistryEncoder | undefined {
  const settings = config.kafka.schemaRegistry;
  return settings === undefined ? undefined : new RegistryEncoder(settings, catalog);
}

/** The consumer's decoder when kafka.schemaRegistry is configured (a consumer needs only the URL). */
export function registryDecoderFromConfig(config: Config): RegistryDecoder | undefined {
  const settings = config.kafka.schemaRegistry;
  return settings === undefined ? undefined : new RegistryDecoder(settings);
}
