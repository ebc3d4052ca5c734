import crypto from 'node:crypto';

// An event's payload fingerprint: SHA-256 of its canonical JSON (object keys sorted at every
// level), so the same payload re-serialised with another key order or spacing hashes the same,
// and any change of a value does not. 128 bits, hex: what the inbox keeps per applied event.

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function payloadHash(payload: Record<string, unknown>): string {
  return crypto.createHash('sha256').update(canonicalJson(payload)).digest('hex').slice(0, 32);
}
