import type { EventCatalog } from '../../src/events/catalog';
import { EVENT_VERSION_HEADER } from '../../src/events/version-header';
import type { OutboxKafkaMessage } from '../../src/outbox/kafka-message';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';

/**
 * Why a row's payload can never be read as its type (the schema's message), or undefined. Only
 * rows of types the catalog knows are parsed: a relay without a catalog, or a row of another
 * type, costs nothing here. toKafkaMessage has already checked the payload is a JSON object.
 */
export function schemaRefusal(events: EventCatalog, row: PendingRow, message: OutboxKafkaMessage): string | undefined {
  if (events.get(row.eventType) === undefined) return undefined;
  return events.refusal(row.eventType, message.headers[EVENT_VERSION_HEADER], JSON.parse(row.value) as Record<string, unknown>);
}
