// PostgreSQL array literals for large array parameters, built in one pass.
//
// Given a JS array, pg builds the literal itself, element by element: two regex replaces and a few
// string concatenations each, the growing literal a rope of those pieces until it is written out.
// For the 1,800-element columns of a consumer batch that was the consumer worker's largest source
// of garbage (docs/measurements/consumer-log.md, "Figures behind code comments"), and with the
// worker's small young generation (workers/node-args.ts) a rope that outlives a scavenge is
// copied, then promoted and marked.
// These build the same literal with one JSON.stringify or join, and hand anything they are not
// sure about back unchanged, to pg's own path.

/**
 * A JSON escape other than `\"` and `\\` (which array literals share): `\n`, `\u0000`, … mean
 * something else there. In JSON's output a run of backslashes is pairs (each a literal backslash),
 * and an odd one out starts an escape: the run's last backslash followed by anything but `"`.
 */
const JSON_ONLY_ESCAPE = /(?<!\\)(?:\\\\)*\\[^"\\]/;

/**
 * `{"a","b",NULL}` for text-like elements (strings, and null as NULL), or the array itself when an
 * element is anything else or holds a character JSON would escape differently.
 */
export function textArrayLiteral(values: readonly (string | null)[]): string | readonly (string | null)[] {
  for (const v of values) if (v !== null && typeof v !== 'string') return values;
  const json = JSON.stringify(values);
  if (JSON_ONLY_ESCAPE.test(json)) return values;
  return `{${json.slice(1, -1)}}`;
}

const INTEGER_TEXT = /^-?\d{1,19}$/;

/** `{1,2,3}` for integers (safe JS integers, or decimal strings as bigint columns use), or the array itself otherwise. */
export function integerArrayLiteral(values: readonly (string | number)[]): string | readonly (string | number)[] {
  for (const v of values) {
    if (typeof v === 'number' ? !Number.isSafeInteger(v) : typeof v !== 'string' || !INTEGER_TEXT.test(v)) return values;
  }
  return `{${values.join(',')}}`;
}
