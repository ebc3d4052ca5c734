import { cachePaths } from '../../tools/local-stack/paths';
import { ensureSchemaRegistry, localSchemaRegistryUrl, stopSchemaRegistry } from '../../tools/local-stack/schema-registry';
import { loadStackConfig } from '../../tools/local-stack/stack-config';

/**
 * The local stack's Schema Registry for a test: built (first time only) and started unless it
 * runs; `stop` stops it only if this call started it (and KEEP_STACK is not set).
 */
export async function testSchemaRegistry(): Promise<{ url: string; stop: () => Promise<void> }> {
  const config = loadStackConfig();
  const paths = cachePaths(config.local.cacheDir);
  const started = await ensureSchemaRegistry(config, paths, (m) => process.stdout.write(`[schema-registry] ${m}\n`));
  return {
    url: localSchemaRegistryUrl(config.local.schemaRegistryPort),
    stop: async () => {
      if (started && !process.env.KEEP_STACK) await stopSchemaRegistry(paths);
    },
  };
}
