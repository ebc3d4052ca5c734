import type { Config } from '../config/env';

/**
 * How every Temporal connection of the project is opened (client and worker alike): the address,
 * and TLS / mTLS / API key from the managed-service settings (docs/managed-services.md).
 * `Connection.connect(temporalConnectionOptions(config))` or `NativeConnection.connect(...)`.
 */
export function temporalConnectionOptions(config: Config, extra: { connectTimeout?: number } = {}) {
  const { address, tls, apiKey, metadata } = config.temporal;
  return {
    address,
    ...(tls === undefined ? {} : { tls }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(metadata === undefined ? {} : { metadata }),
    ...(extra.connectTimeout === undefined ? {} : { connectTimeout: extra.connectTimeout }),
  };
}
