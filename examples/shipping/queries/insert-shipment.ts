import type { SqlExecutor } from 'temporal-outbox';

export interface ShipmentRow {
  orderId: string;
  carrier: string;
  trackingNumber: string;
  eventId: string;
  shippedAt: string;
}

export const INSERT_SHIPMENT_SQL = `
INSERT INTO shipments (order_id, carrier, tracking_number, event_id, shipped_at)
VALUES ($1, $2, $3, $4, $5::timestamptz)`;

/** Plain insert: a second shipment for one order is a unique violation, which parks the event. */
export async function insertShipment(db: SqlExecutor, row: ShipmentRow): Promise<void> {
  await db.query(INSERT_SHIPMENT_SQL, [row.orderId, row.carrier, row.trackingNumber, row.eventId, row.shippedAt]);
}
