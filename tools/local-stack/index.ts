// The local development stack (PostgreSQL, Kafka, Temporal dev server provisioned into a cache
// folder). For trying the library and for its demo; production brings its own services.
export { stackUp, stackDown, stackStatus, type ServiceName } from './stack';
export { cachePaths } from './paths';
export { loadStackConfig, localStackEnv, type StackConfig } from './stack-config';
export { workerTargets } from './prometheus';
export { ensureSchemaRegistry, localSchemaRegistryUrl, stopSchemaRegistry } from './schema-registry';
