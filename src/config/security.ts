import fs from 'node:fs';
import type { KafkaSaslSettings, KafkaSslSettings } from './settings';

/** The variables this module reads (src/config/env.ts declares and validates them). */
export interface KafkaSecurityEnv {
  KAFKA_SSL?: 'true' | 'false';
  KAFKA_SSL_CA_FILE?: string;
  KAFKA_SSL_CERT_FILE?: string;
  KAFKA_SSL_KEY_FILE?: string;
  KAFKA_SSL_REJECT_UNAUTHORIZED?: 'true' | 'false';
  KAFKA_SASL_MECHANISM?: KafkaSaslSettings['mechanism'];
  KAFKA_SASL_USERNAME?: string;
  KAFKA_SASL_PASSWORD?: string;
  KAFKA_SASL_PASSWORD_FILE?: string;
}

/** libpq's sslmode values. */
export type DatabaseSslMode = 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

// Kafka's credentials and TLS from the variables (docs/managed-services.md); Temporal's follow
// @temporalio/envconfig (src/config/temporal-env.ts). Files are read here, once, so a missing or
// unreadable one is reported with every other configuration problem at start-up, not at the
// first connection.

export function kafkaSecurityFromEnv(e: KafkaSecurityEnv, problems: string[]): { ssl?: KafkaSslSettings; sasl?: KafkaSaslSettings } {
  const read = (variable: keyof KafkaSecurityEnv): Buffer | undefined => {
    const file = e[variable];
    if (file === undefined) return undefined;
    try {
      return fs.readFileSync(file);
    } catch (err) {
      problems.push(`${variable}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      return undefined;
    }
  };
  const ca = read('KAFKA_SSL_CA_FILE');
  const cert = read('KAFKA_SSL_CERT_FILE');
  const key = read('KAFKA_SSL_KEY_FILE');
  if ((e.KAFKA_SSL_CERT_FILE === undefined) !== (e.KAFKA_SSL_KEY_FILE === undefined)) {
    problems.push('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE: a client certificate needs its key, and the other way round');
  }
  const tlsFiles = [e.KAFKA_SSL_CA_FILE, e.KAFKA_SSL_CERT_FILE, e.KAFKA_SSL_KEY_FILE].some((f) => f !== undefined);
  if (e.KAFKA_SSL === 'false' && tlsFiles) problems.push('KAFKA_SSL: false, but TLS files are set (KAFKA_SSL_CA_FILE / _CERT_FILE / _KEY_FILE)');
  const sslOn = e.KAFKA_SSL === 'true' || (e.KAFKA_SSL === undefined && tlsFiles);
  const ssl = sslOn ? { ca: ca?.toString('utf8'), cert: cert?.toString('utf8'), key: key?.toString('utf8'), rejectUnauthorized: e.KAFKA_SSL_REJECT_UNAUTHORIZED !== 'false' } : undefined;

  if (e.KAFKA_SASL_PASSWORD !== undefined && e.KAFKA_SASL_PASSWORD_FILE !== undefined) problems.push('KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE: set one of them, not both');
  const password = e.KAFKA_SASL_PASSWORD ?? read('KAFKA_SASL_PASSWORD_FILE')?.toString('utf8').trim();
  if (e.KAFKA_SASL_MECHANISM === undefined) {
    if (e.KAFKA_SASL_USERNAME !== undefined || password !== undefined) problems.push('KAFKA_SASL_MECHANISM: set it (plain, scram-sha-256 or scram-sha-512) to use KAFKA_SASL_USERNAME and its password');
    return { ssl };
  }
  if (e.KAFKA_SASL_USERNAME === undefined || password === undefined) {
    problems.push(`KAFKA_SASL_MECHANISM=${e.KAFKA_SASL_MECHANISM} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE)`);
    return { ssl };
  }
  return { ssl, sasl: { mechanism: e.KAFKA_SASL_MECHANISM, username: e.KAFKA_SASL_USERNAME, password } };
}

/**
 * Adds libpq's `sslmode` and `sslrootcert` to a PostgreSQL URL that names no `sslmode` of its own.
 * `uselibpqcompat=true` makes node-postgres read them as libpq does (`require` encrypts without
 * checking the certificate unless a CA is given; `verify-full` also checks the host name).
 */
export function withDatabaseSsl(url: string, sslmode: DatabaseSslMode | undefined, sslrootcert: string | undefined): string {
  if (sslmode === undefined && sslrootcert === undefined) return url;
  const u = new URL(url);
  if (u.searchParams.has('sslmode')) return url;
  u.searchParams.set('sslmode', sslmode ?? 'verify-full');
  if (sslrootcert !== undefined) u.searchParams.set('sslrootcert', sslrootcert);
  if (!u.searchParams.has('uselibpqcompat')) u.searchParams.set('uselibpqcompat', 'true');
  return u.toString();
}
