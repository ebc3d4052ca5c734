import fs from 'node:fs';
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import type { TemporalSettings } from './settings';

/**
 * Names this project used before it followed @temporalio/envconfig, and the name each is now.
 * They keep working: the value moves to the new name unless that one is set too, and a notice
 * (logged once by each worker, and by the CLI) names the replacement.
 */
const RENAMED = {
  TEMPORAL_TLS_CERT_FILE: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY_FILE: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  TEMPORAL_TLS_CA_FILE: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
} as const;

/**
 * Temporal's connection from the environment as Temporal's own SDKs and CLI read it
 * (@temporalio/envconfig): TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,
 * TEMPORAL_GRPC_META_*, over the profile TEMPORAL_PROFILE names in TEMPORAL_CONFIG_FILE (or the
 * default file, when it exists). Only the settings found are returned; the rest keep their defaults.
 */
export function temporalFromEnv(env: Record<string, string>, problems: string[], notices: string[]): Partial<TemporalSettings> {
  const translated = { ...env };
  for (const [old, now] of Object.entries(RENAMED)) {
    if (env[old] === undefined) continue;
    notices.push(`${old} is deprecated: use ${now} (@temporalio/envconfig's name)`);
    translated[now] ??= env[old];
  }
  if (env.TEMPORAL_API_KEY_FILE !== undefined) {
    notices.push('TEMPORAL_API_KEY_FILE is deprecated: use TEMPORAL_API_KEY, or api_key in a TEMPORAL_CONFIG_FILE profile');
    if (env.TEMPORAL_API_KEY !== undefined) problems.push('TEMPORAL_API_KEY and TEMPORAL_API_KEY_FILE: set one of them, not both');
    else {
      try {
        translated.TEMPORAL_API_KEY = fs.readFileSync(env.TEMPORAL_API_KEY_FILE, 'utf8').trim();
      } catch (err) {
        problems.push(`TEMPORAL_API_KEY_FILE: cannot read ${env.TEMPORAL_API_KEY_FILE} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      }
    }
  }
  const implied = ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_NAME'].some((v) => translated[v] !== undefined);
  if (translated.TEMPORAL_TLS === 'false' && implied) problems.push('TEMPORAL_TLS: false, but TLS settings are set (TEMPORAL_TLS_CLIENT_CERT_PATH / _SERVER_CA_CERT_PATH / _SERVER_NAME)');
  if ((translated.TEMPORAL_TLS_CLIENT_CERT_PATH === undefined) !== (translated.TEMPORAL_TLS_CLIENT_KEY_PATH === undefined)) {
    problems.push('TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH: a client certificate needs its key, and the other way round');
  }
  try {
    const { namespace, connectionOptions } = toClientOptions(loadClientConfigProfile({ overrideEnvVars: translated }));
    const { address, tls, apiKey, metadata } = connectionOptions;
    return Object.fromEntries(Object.entries({ address, namespace, tls, apiKey, metadata }).filter(([, v]) => v !== undefined)) as Partial<TemporalSettings>;
  } catch (err) {
    problems.push(`Temporal connection settings (TEMPORAL_* / TEMPORAL_CONFIG_FILE): ${(err as Error).message}`);
    return {};
  }
}
