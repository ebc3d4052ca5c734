import { z } from 'zod';
import { defineEvent, quoteValue as quote } from 'temporal-outbox';

export const ORDER_SHIPPED = 'order_shipped';

const MAX_FIELD = 200;
const textError = (issue: { input?: unknown }) => `must be a non-empty string of at most ${MAX_FIELD} characters (got ${quote(issue.input)})`;
const text = () => z.string({ error: textError }).regex(/\S/, { error: textError }).max(MAX_FIELD, { error: textError });

/** order_shipped as an Avro record, for a topic the Schema Registry carries in Avro: every field of the payload, the envelope's included. */
export const ORDER_SHIPPED_AVRO = {
  type: 'record',
  name: 'OrderShipped',
  namespace: 'shipping',
  fields: ['event_id', 'type', 'order_id', 'carrier', 'tracking_number', 'shipped_at'].map((name) => ({ name, type: 'string' })),
};

/** `order_shipped`: an order left the warehouse with a carrier. Keyed by order. */
export const OrderShipped = defineEvent({
  type: ORDER_SHIPPED,
  schema: z.object({
    order_id: text(),
    carrier: text(),
    tracking_number: text(),
    shipped_at: z.iso.datetime({ offset: true, error: (issue) => `must be an ISO 8601 timestamp (got ${quote(issue.input)})` }),
  }),
  key: (p) => p.order_id,
  description: 'An order shipped: record its shipment, once per order.',
  avroSchema: ORDER_SHIPPED_AVRO,
});
