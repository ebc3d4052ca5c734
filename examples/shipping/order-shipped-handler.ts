import { defineHandler, quoteValue as quote, type EventHandler, type Validation } from 'temporal-outbox';
import { insertShipment } from './queries/insert-shipment';

// The second example consumer, of a different kind than the credit: it inserts a row instead of
// updating a balance, has no set-based path (the library applies it one event at a time), and
// relies on a table constraint for a business rule (one shipment per order).

export const ORDER_SHIPPED = 'order_shipped';

export interface ShipmentData {
  orderId: string;
  carrier: string;
  trackingNumber: string;
  shippedAt: string;
}

const MAX_FIELD = 200;

export function validateShipment(p: Record<string, unknown>): Validation<ShipmentData> {
  const fields: Record<string, unknown> = { order_id: p.order_id, carrier: p.carrier, tracking_number: p.tracking_number };
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value !== 'string' || value.trim() === '') return { ok: false, reason: `${name} must be a non-empty string (got ${quote(value)})` };
    if (value.length > MAX_FIELD) return { ok: false, reason: `${name} longer than ${MAX_FIELD} characters` };
  }
  const shippedAt = p.shipped_at;
  if (typeof shippedAt !== 'string' || Number.isNaN(Date.parse(shippedAt))) {
    return { ok: false, reason: `shipped_at must be an ISO 8601 timestamp (got ${quote(shippedAt)})` };
  }
  return { ok: true, data: { orderId: p.order_id as string, carrier: p.carrier as string, trackingNumber: p.tracking_number as string, shippedAt: new Date(shippedAt).toISOString() } };
}

export function orderShippedHandler(): EventHandler<ShipmentData> {
  return defineHandler<ShipmentData>({
    eventType: ORDER_SHIPPED,
    validate: validateShipment,
    async apply(tx, event) {
      await insertShipment(tx, { ...event.data, eventId: event.eventId });
    },
  });
}
