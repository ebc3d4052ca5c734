import crypto from 'node:crypto';

// An event's payload fingerprint: SHA-256 of its canonical JSON (object keys sorted at every
// level), so the same payload re-serialised with another key order or spacing hashes the same,
// and any change of a value does not. 128 bits, hex: what the inbox keeps per applied event.
//
// Hashes are stored with every applied event and compared on every redelivery, so the canonical
// form must never change between releases (test/unit/inbox-validate.unit.test.ts pins it). This
// runs on the consumer's event loop for every message: one pass, no per-key arrays or closures
// (an Object.entries/filter/map version took nearly three times as long:
// docs/measurements/consumer-log.md, "Figures behind code comments").

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = sortKeys(Object.keys(object));
  let text = '{';
  for (const key of keys) {
    const v = object[key];
    if (v === undefined) continue;
    text += (text.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(v);
  }
  return `${text}}`;
}

/**
 * The keys in the default sort's order (UTF-16 code units, as `<` compares strings: integer-like
 * keys sort as text). Sorted in place by insertion for the few keys of a typical payload: the
 * built-in sort allocates a work copy per call, a large share of the consumer's garbage
 * (docs/measurements/consumer-log.md, "Figures behind code comments").
 */
function sortKeys(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

export function payloadHash(payload: Record<string, unknown>): string {
  // crypto.hash (Node ≥ 20.12): one call, without a Hash object per event.
  return crypto.hash('sha256', canonicalJson(payload), 'hex').slice(0, 32);
}
