import { defineEventHandler, type EventData, type EventHandler } from 'temporal-outbox';
import { OrderShipped } from './order-shipped-event';
import { insertShipment } from './queries/insert-shipment';

// The second example consumer, of a different kind than the credit: it inserts a row instead of
// updating a balance, has no set-based path (the library applies it one event at a time), and
// relies on a table constraint for a business rule (one shipment per order).

export { ORDER_SHIPPED } from './order-shipped-event';

export type ShipmentData = EventData<typeof OrderShipped.schema>;

export function orderShippedHandler(): EventHandler<ShipmentData> {
  return defineEventHandler(OrderShipped, {
    async apply(tx, event) {
      const d = event.data;
      await insertShipment(tx, { orderId: d.order_id, carrier: d.carrier, trackingNumber: d.tracking_number, shippedAt: new Date(d.shipped_at).toISOString(), eventId: event.eventId });
    },
  });
}
