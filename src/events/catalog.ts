import type { AnyEventDefinition } from './define-event';
import { checkWritten } from './read-event';

/** The event types a service knows, by type: what a relay checks rows against and the AsyncAPI document describes. */
export interface EventCatalog {
  readonly kind: 'temporal-outbox.catalog';
  /** The newest known definition of the type. */
  get(type: string): AnyEventDefinition | undefined;
  definitions(): AnyEventDefinition[];
  /**
   * Why a row's payload can never be read as its type says (parked by the relay with this
   * reason), or undefined: a known type at a known version that its schema refuses. Types the
   * catalog does not know, and versions newer than it knows, pass: a consumer may know them.
   */
  refusal(type: string, versionHeader: string | undefined, payload: Record<string, unknown>): string | undefined;
}

/**
 * A catalog of definitions. Two versions of one type (the v1 and the v2 definition, which share
 * their history) keep the newer; two unrelated definitions of one type are refused.
 */
export function defineEventCatalog(definitions: readonly AnyEventDefinition[]): EventCatalog {
  const byType = new Map<string, AnyEventDefinition>();
  for (const definition of definitions) {
    const known = byType.get(definition.type);
    if (known === undefined) {
      byType.set(definition.type, definition);
      continue;
    }
    const [older, newer] = known.version <= definition.version ? [known, definition] : [definition, known];
    if (newer.versions[older.versions.length - 1] !== older.versions[older.versions.length - 1]) {
      throw new TypeError(`two unrelated definitions of event type ${definition.type}: define v${newer.version} with the v${older.version} definition's evolve()`);
    }
    byType.set(definition.type, newer);
  }
  return {
    kind: 'temporal-outbox.catalog',
    get: (type) => byType.get(type),
    definitions: () => [...byType.values()].sort((a, b) => a.type.localeCompare(b.type)),
    refusal(type, versionHeader, payload) {
      const definition = byType.get(type);
      if (definition === undefined) return undefined;
      const checked = checkWritten(definition, versionHeader, payload);
      return checked.ok ? undefined : checked.reason;
    },
  };
}

export function isEventCatalog(value: unknown): value is EventCatalog {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'temporal-outbox.catalog';
}
