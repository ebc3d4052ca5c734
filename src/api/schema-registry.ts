// Schema Registry encoding (docs/formats.md#schema-registry): the schemas a service declares per
// event type, the encoder its relay activities take, the decoder, and the client for a deployment
// step that registers schemas itself.
export {
  SchemaCatalog,
  type EventSchema,
  schemaCatalogFromEvents,
  SchemaRegistryClient,
  RegistryEncoder,
  RegistryDecoder,
  RegistryRefusedError,
  RegistryUnavailableError,
  registryEncoderFromConfig,
  registryDecoderFromConfig,
  subjectFor,
  type RegistryFormat,
  type SchemaRegistryOptions,
  type SchemaRegistrySettings,
  type SubjectNaming,
} from '../formats/registry';
