import type { Config } from '../config/env';

/**
 * How every Temporal connection of the project is opened (client and worker alike): the address,
 * and TLS / mTLS / API key from the managed-service settings (docs/managed-services.md).
 * `Connection.connect(temporalConnectionOptions(config))` or `NativeConnection.connect(...)`.
 */
export function temporalConnectionOptions(config: Config, extra: { connectTimeout?: number } = {}) {
  const { tls, apiKey } = config.security.temporal;
  return {
    address: config.temporal.address,
    ...(tls === undefined
      ? {}
      : {
          tls:
            tls === false
              ? false
              : { serverNameOverride: tls.serverName, serverRootCACertificate: tls.ca, clientCertPair: tls.clientCertPair },
        }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(extra.connectTimeout === undefined ? {} : { connectTimeout: extra.connectTimeout }),
  };
}
