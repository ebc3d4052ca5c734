import type { JsonSchema } from './json-schema';

/**
 * How a new version must relate to the one before it (the Schema Registry's names):
 * - backward: a consumer on the new version reads events of the previous one (consumers upgrade
 *   first). An upcast registered with the new version is that reading: its output is checked
 *   against the new schema on every event, so with an upcast the structural check is skipped.
 * - forward: a consumer still on the previous version reads events of the new one (producers
 *   upgrade first): no upcast helps an old consumer, so the new schema must be readable as the old.
 * - full: both. none: no check.
 */
export type CompatibilityMode = 'backward' | 'forward' | 'full' | 'none';

/**
 * Why `next` may not follow `previous` under `mode`; empty when it may. Structural only: types,
 * required fields, closed objects (additionalProperties: false), enums and constants, nested
 * objects and array items. Ranges, lengths and patterns are not compared.
 */
export function checkCompatibility(previous: JsonSchema, next: JsonSchema, mode: CompatibilityMode, opts: { upcast: boolean }): string[] {
  const problems: string[] = [];
  if ((mode === 'backward' || mode === 'full') && !opts.upcast) {
    readable({ reader: next, writer: previous, path: '', problems, readerIs: 'the new version', writerIs: 'the previous version', hint: 'register an upcast, or make it optional' });
  }
  if (mode === 'forward' || mode === 'full') {
    readable({ reader: previous, writer: next, path: '', problems, readerIs: 'the previous version', writerIs: 'the new version', hint: 'consumers of the previous version would park these events' });
  }
  return problems;
}

interface Reading {
  reader: JsonSchema;
  writer: JsonSchema;
  path: string;
  problems: string[];
  readerIs: string;
  writerIs: string;
  hint: string;
}

/** Records why some value `writer` allows would fail `reader`. */
function readable(r: Reading): void {
  const where = r.path === '' ? 'the payload' : `field ${JSON.stringify(r.path)}`;
  const readerTypes = typesOf(r.reader);
  const writerTypes = typesOf(r.writer);
  if (readerTypes !== undefined) {
    if (writerTypes === undefined) {
      r.problems.push(`${where} may be of any type in ${r.writerIs} but must be ${readerTypes.join(' or ')} in ${r.readerIs} (${r.hint})`);
      return;
    }
    const refused = writerTypes.filter((t) => !readerTypes.includes(t) && !(t === 'integer' && readerTypes.includes('number')));
    if (refused.length > 0) {
      r.problems.push(`${where} is ${writerTypes.join(' or ')} in ${r.writerIs} but ${readerTypes.join(' or ')} in ${r.readerIs} (${r.hint})`);
      return;
    }
  }
  const readerValues = valuesOf(r.reader);
  if (readerValues !== undefined) {
    const writerValues = valuesOf(r.writer);
    const extra = writerValues === undefined ? undefined : writerValues.filter((v) => !readerValues.some((x) => JSON.stringify(x) === JSON.stringify(v)));
    if (extra === undefined || extra.length > 0) {
      const what = extra === undefined ? 'any value' : `values ${extra.map((v) => JSON.stringify(v)).join(', ')}`;
      r.problems.push(`${where} allows ${what} in ${r.writerIs} that ${r.readerIs} does not accept (${r.hint})`);
    }
  }
  if (isObject(r.reader) || isObject(r.writer)) readObject(r);
  const readerItems = r.reader.items;
  const writerItems = r.writer.items;
  if (isSchema(readerItems) && isSchema(writerItems)) readable({ ...r, reader: readerItems, writer: writerItems, path: `${r.path}[]` });
}

function readObject(r: Reading): void {
  const readerProps = propertiesOf(r.reader);
  const writerProps = propertiesOf(r.writer);
  const writerRequired = new Set(requiredOf(r.writer));
  const field = (name: string) => (r.path === '' ? name : `${r.path}.${name}`);
  for (const name of requiredOf(r.reader)) {
    if (writerRequired.has(name)) continue;
    const state = Object.hasOwn(writerProps, name) ? 'is optional in' : 'is not in';
    r.problems.push(`field ${JSON.stringify(field(name))} is required by ${r.readerIs} but ${state} ${r.writerIs} (${r.hint})`);
  }
  for (const [name, writerProp] of Object.entries(writerProps)) {
    const readerProp = readerProps[name];
    if (readerProp === undefined) {
      if (r.reader.additionalProperties === false) r.problems.push(`field ${JSON.stringify(field(name))} of ${r.writerIs} is not allowed by ${r.readerIs}, whose object is closed (${r.hint})`);
      continue;
    }
    if (isSchema(readerProp) && isSchema(writerProp)) readable({ ...r, reader: readerProp, writer: writerProp, path: field(name) });
  }
}

function typesOf(schema: JsonSchema): string[] | undefined {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string');
  if (Array.isArray(schema.anyOf)) {
    const nested = schema.anyOf.filter(isSchema).map(typesOf);
    if (nested.every((t) => t !== undefined)) return [...new Set(nested.flat())];
  }
  return undefined;
}

function valuesOf(schema: JsonSchema): unknown[] | undefined {
  if (Object.hasOwn(schema, 'const')) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  return undefined;
}

function isObject(schema: JsonSchema): boolean {
  return schema.type === 'object' || schema.properties !== undefined;
}

function propertiesOf(schema: JsonSchema): Record<string, unknown> {
  return isSchema(schema.properties) ? schema.properties : {};
}

function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((n): n is string => typeof n === 'string') : [];
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
