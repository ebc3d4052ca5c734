// Where an event's schema version travels: a header of its own, `event-version` (a decimal
// integer), written by the typed enqueue into the row's headers and copied to the Kafka message
// by the relay like every producer header. Why a header rather than the payload or the type name:
// - the payload stays the business data a plain-SQL producer writes (the public row contract,
//   {"event_id","type",...}, is unchanged);
// - the type name stays one name across versions, so topic routes, handler lookup, the inbox,
//   parked-row reports and the audit (all keyed on the type) need no change when a type evolves;
// - it is read without parsing the body, as the registry's schema id and CloudEvents'
//   dataschema are.
// A message without it is the type's first version: that is what every producer wrote before
// the type had a second one.

export const EVENT_VERSION_HEADER = 'event-version';

export type ParsedVersion = { ok: true; version: number | undefined } | { ok: false; reason: string };

/** The header's value as a version number; undefined when absent (the type's first version). */
export function parseVersionHeader(value: string | undefined): ParsedVersion {
  if (value === undefined || value === '') return { ok: true, version: undefined };
  if (!/^[1-9][0-9]{0,8}$/.test(value)) return { ok: false, reason: `${EVENT_VERSION_HEADER} header must be a positive integer (got ${JSON.stringify(value.slice(0, 40))})` };
  return { ok: true, version: Number(value) };
}
