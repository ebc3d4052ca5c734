import fs from 'node:fs';

export interface SecurityConfig {
  kafka: {
    /** PEM contents, read from the *_FILE settings at load time. */
    ssl?: { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean };
    sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
  };
  temporal: {
    /** false: plaintext even with an API key (a local test server only). */
    tls?: { serverName?: string; ca?: Buffer; clientCertPair?: { crt: Buffer; key: Buffer } } | false;
    apiKey?: string;
  };
}

// Credentials and TLS for managed services, from the variables src/config/env.ts declares
// (docs/managed-services.md). Files are read here, once, so a missing or unreadable one is
// reported with every other configuration problem at start-up, not at the first connection.

/**
 * The variables read here, as src/config/env.ts has checked them. Declared here, not taken from
 * env.ts's type, so that the two modules do not import each other; env.ts passes its parsed
 * settings, and a variable renamed or retyped there stops compiling where it does.
 */
export interface SecurityEnv {
  DATABASE_SSLMODE?: 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';
  KAFKA_SSL?: 'true' | 'false';
  KAFKA_SSL_CA_FILE?: string;
  KAFKA_SSL_CERT_FILE?: string;
  KAFKA_SSL_KEY_FILE?: string;
  KAFKA_SSL_REJECT_UNAUTHORIZED: 'true' | 'false';
  KAFKA_SASL_MECHANISM?: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  KAFKA_SASL_USERNAME?: string;
  KAFKA_SASL_PASSWORD?: string;
  KAFKA_SASL_PASSWORD_FILE?: string;
  TEMPORAL_TLS?: 'true' | 'false';
  TEMPORAL_TLS_CERT_FILE?: string;
  TEMPORAL_TLS_KEY_FILE?: string;
  TEMPORAL_TLS_CA_FILE?: string;
  TEMPORAL_TLS_SERVER_NAME?: string;
  TEMPORAL_API_KEY?: string;
  TEMPORAL_API_KEY_FILE?: string;
}

export function securityConfig(e: SecurityEnv, problems: string[]): SecurityConfig {
  const read = (variable: keyof SecurityEnv): Buffer | undefined => {
    const file = e[variable] as string | undefined;
    if (file === undefined) return undefined;
    try {
      return fs.readFileSync(file);
    } catch (err) {
      problems.push(`${variable}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      return undefined;
    }
  };
  const secret = (variable: keyof SecurityEnv, fileVariable: keyof SecurityEnv): string | undefined => {
    if (e[variable] !== undefined && e[fileVariable] !== undefined) problems.push(`${variable} and ${fileVariable}: set one of them, not both`);
    return (e[variable] as string | undefined) ?? read(fileVariable)?.toString('utf8').trim();
  };
  return { kafka: kafkaSecurity(e, read, secret, problems), temporal: temporalSecurity(e, read, secret, problems) };
}

type Read = (variable: keyof SecurityEnv) => Buffer | undefined;
type Secret = (variable: keyof SecurityEnv, fileVariable: keyof SecurityEnv) => string | undefined;

function kafkaSecurity(e: SecurityEnv, read: Read, secret: Secret, problems: string[]): SecurityConfig['kafka'] {
  const ca = read('KAFKA_SSL_CA_FILE');
  const cert = read('KAFKA_SSL_CERT_FILE');
  const key = read('KAFKA_SSL_KEY_FILE');
  if ((e.KAFKA_SSL_CERT_FILE === undefined) !== (e.KAFKA_SSL_KEY_FILE === undefined)) {
    problems.push('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE: a client certificate needs its key, and the other way round');
  }
  const tlsFiles = [e.KAFKA_SSL_CA_FILE, e.KAFKA_SSL_CERT_FILE, e.KAFKA_SSL_KEY_FILE].some((f) => f !== undefined);
  if (e.KAFKA_SSL === 'false' && tlsFiles) problems.push('KAFKA_SSL: false, but TLS files are set (KAFKA_SSL_CA_FILE / _CERT_FILE / _KEY_FILE)');
  const sslOn = e.KAFKA_SSL === 'true' || (e.KAFKA_SSL === undefined && tlsFiles);
  const ssl = sslOn
    ? { ca: ca?.toString('utf8'), cert: cert?.toString('utf8'), key: key?.toString('utf8'), rejectUnauthorized: e.KAFKA_SSL_REJECT_UNAUTHORIZED === 'true' }
    : undefined;

  const password = secret('KAFKA_SASL_PASSWORD', 'KAFKA_SASL_PASSWORD_FILE');
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

function temporalSecurity(e: SecurityEnv, read: Read, secret: Secret, problems: string[]): SecurityConfig['temporal'] {
  const ca = read('TEMPORAL_TLS_CA_FILE');
  const crt = read('TEMPORAL_TLS_CERT_FILE');
  const key = read('TEMPORAL_TLS_KEY_FILE');
  if ((e.TEMPORAL_TLS_CERT_FILE === undefined) !== (e.TEMPORAL_TLS_KEY_FILE === undefined)) {
    problems.push('TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE: a client certificate needs its key, and the other way round');
  }
  const apiKey = secret('TEMPORAL_API_KEY', 'TEMPORAL_API_KEY_FILE');
  const implied = [e.TEMPORAL_TLS_CERT_FILE, e.TEMPORAL_TLS_CA_FILE, e.TEMPORAL_TLS_SERVER_NAME].some((v) => v !== undefined);
  if (e.TEMPORAL_TLS === 'false' && implied) problems.push('TEMPORAL_TLS: false, but TLS settings are set (TEMPORAL_TLS_CERT_FILE / _CA_FILE / _SERVER_NAME)');
  // An API key is a bearer token: it must never travel in clear, so it turns TLS on (TEMPORAL_TLS=false keeps it off, for a local test server only).
  const tlsOn = e.TEMPORAL_TLS === 'true' || (e.TEMPORAL_TLS === undefined && (implied || apiKey !== undefined));
  const tls = tlsOn ? { serverName: e.TEMPORAL_TLS_SERVER_NAME, ca, clientCertPair: crt && key ? { crt, key } : undefined } : e.TEMPORAL_TLS === 'false' ? false : undefined;
  return { tls, apiKey };
}

/**
 * Adds libpq's `sslmode` and `sslrootcert` to a PostgreSQL URL that names no `sslmode` of its own.
 * `uselibpqcompat=true` makes node-postgres read them as libpq does (`require` encrypts without
 * checking the certificate unless a CA is given; `verify-full` also checks the host name).
 */
export function withDatabaseSsl(url: string, sslmode: SecurityEnv['DATABASE_SSLMODE'], sslrootcert: string | undefined): string {
  if (sslmode === undefined && sslrootcert === undefined) return url;
  const u = new URL(url);
  if (u.searchParams.has('sslmode')) return url;
  u.searchParams.set('sslmode', sslmode ?? 'verify-full');
  if (sslrootcert !== undefined) u.searchParams.set('sslrootcert', sslrootcert);
  if (!u.searchParams.has('uselibpqcompat')) u.searchParams.set('uselibpqcompat', 'true');
  return u.toString();
}
