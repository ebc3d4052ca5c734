import type { z } from 'zod';
import type { Validation } from '../inbox/handler';
import type { AnyEventDefinition, EventDefinition, EventVersion } from './define-event';
import { parseVersionHeader } from './version-header';

// Checking a payload against its type: at enqueue (the version the producer writes), at the relay
// (the version the row says it is) and at the consumer (read as the handler's version, upcast
// from older ones). The reason is the schema's own messages, with the field each one is about.

const MAX_REASON = 500;

/**
 * The payload without its envelope fields (event_id, type), which the type's schema does not
 * describe. A rest copy rather than a copy with those keys deleted: `delete` turns the copy into a
 * slow dictionary object, and this runs for every event the consumer applies
 * (docs/measurements/consumer-log.md, s43's profiles).
 */
export function dataOf(payload: Record<string, unknown>): Record<string, unknown> {
  const { event_id, type, ...data } = payload;
  return data;
}

/** Checks a payload's data against one version's schema; the data comes back as that schema outputs it. */
export function checkVersion(type: string, entry: EventVersion, data: unknown): Validation<unknown> {
  const result = entry.schema.safeParse(data);
  if (result.success) return { ok: true, data: result.data };
  return { ok: false, reason: clip(`${type} v${entry.version}: ${formatIssues(result.error)}`) };
}

export function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length === 0 ? issue.message : `${pathText(issue.path)}: ${issue.message}`)).join('; ');
}

/**
 * Reads a payload of any known version as `definition`'s version. `versionHeader` is the
 * message's event-version (absent: the type's first version). Each older version's data goes
 * through the next version's upcast and is checked against that version's schema, so `apply`
 * only ever sees data its own schema accepts. A version newer than the handler's is read with
 * the handler's schema: the type's forward compatibility (when its mode asks for it) is what
 * makes that work.
 */
export function readAs<S extends z.ZodObject>(definition: EventDefinition<S>, versionHeader: string | undefined, payload: Record<string, unknown>): Validation<z.output<S>> {
  const parsed = parseVersionHeader(versionHeader);
  if (!parsed.ok) return parsed;
  const versions = definition.versions;
  const written = parsed.version ?? versions[0]!.version;
  let index = versions.findIndex((v) => v.version === written);
  if (index < 0) {
    if (written < definition.version) return { ok: false, reason: `${definition.type} has no version ${written} (known: ${versions.map((v) => v.version).join(', ')})` };
    const read = checkVersion(definition.type, versions[versions.length - 1]!, dataOf(payload));
    return read.ok ? (read as Validation<z.output<S>>) : { ok: false, reason: clip(`${definition.type} v${written} read as v${definition.version}: ${read.reason}`) };
  }
  let checked = checkVersion(definition.type, versions[index]!, dataOf(payload));
  while (checked.ok && ++index < versions.length) {
    const entry = versions[index]!;
    let input: unknown = checked.data;
    if (entry.upcast) {
      try {
        input = entry.upcast(checked.data);
      } catch (err) {
        return { ok: false, reason: clip(`${definition.type}: upcast from v${versions[index - 1]!.version} to v${entry.version} failed: ${(err as Error).message}`) };
      }
    }
    checked = checkVersion(definition.type, entry, input);
  }
  return checked as Validation<z.output<S>>;
}

/** The relay's check of a row: against the version it was written as, no upcast. Unknown versions pass (a consumer may know them). */
export function checkWritten(definition: AnyEventDefinition, versionHeader: string | undefined, payload: Record<string, unknown>): Validation<unknown> {
  const parsed = parseVersionHeader(versionHeader);
  if (!parsed.ok) return parsed;
  const entry = definition.versions.find((v) => v.version === (parsed.version ?? definition.versions[0]!.version));
  if (entry === undefined) return { ok: true, data: undefined };
  return checkVersion(definition.type, entry, dataOf(payload));
}

function pathText(path: PropertyKey[]): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text === '' ? String(part) : `.${String(part)}`;
  return text;
}

function clip(reason: string): string {
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 3)}...` : reason;
}
