import crypto from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Pool } from 'pg';
import { enqueue, inTransaction, SchemaRegistryClient } from 'temporal-outbox';
import { OrderShipped, ORDER_SHIPPED, ORDER_SHIPPED_AVRO } from '../../shipping/order-shipped-event';

// `npm start -- --with-registry`: the shipping example's order_shipped events on a topic of their
// own, encoded in Avro through the local Schema Registry (Apicurio) by the relay and decoded through
// it by the consumer, beside the payments in plain JSON. Opt-in: the first run builds the registry
// from Maven Central (minutes), docs/demo.md.

export const SHIPMENTS_TOPIC = 'orders.events';

/** Where the shipments go: orders.events, unless KAFKA_TOPIC_ROUTES already routes order_shipped elsewhere (a test runs on a topic of its own). */
export function shipmentsTopicOf(routes: Readonly<Record<string, string>>): string {
  return Object.hasOwn(routes, ORDER_SHIPPED) ? routes[ORDER_SHIPPED]! : SHIPMENTS_TOPIC;
}

/**
 * The workers' settings: order_shipped routed to its topic, that topic Avro through the registry,
 * the consumer applying both types. Routes and registry topics set in the environment are kept.
 */
export function registryDemoEnv(registryUrl: string, topic: string, kafka: { routes: Readonly<Record<string, string>>; registryTopics: Readonly<Record<string, string>> }): Record<string, string> {
  const pairs = (entries: Record<string, string>) => Object.entries(entries).map(([k, v]) => `${k}=${v}`).join(',');
  return {
    KAFKA_TOPIC_ROUTES: pairs({ ...kafka.routes, [ORDER_SHIPPED]: topic }),
    SCHEMA_REGISTRY_URL: registryUrl,
    SCHEMA_REGISTRY_TOPICS: pairs({ ...kafka.registryTopics, [topic]: 'avro' }),
    CONSUMER_HANDLERS: `payment_confirmed,${ORDER_SHIPPED}`,
  };
}

/** Registers the schema under the topic's subject, as a deployment step would (idempotent); returns its id. */
export function registerShipmentSchema(registryUrl: string, topic: string): Promise<number> {
  return new SchemaRegistryClient({ url: registryUrl, requestTimeoutMs: 10_000 }).register(`${topic}-value`, JSON.stringify(ORDER_SHIPPED_AVRO), 'AVRO');
}

/** One shipment: the typed order_shipped event in its own transaction. */
export async function shipOneDemoOrder(pool: Pool): Promise<void> {
  const orderId = `ord_${crypto.randomUUID()}`;
  await inTransaction(pool, (client) =>
    enqueue(client, OrderShipped, { order_id: orderId, carrier: 'demo-post', tracking_number: `TRK${crypto.randomInt(1e9)}`, shipped_at: new Date().toISOString() }),
  );
}

/**
 * The orders of the shipments still in the outbox and not parked: what the consumer must have
 * recorded. Not a count of all rows: retention deletes published outbox rows after a day, while
 * the shipments an earlier run recorded stay.
 */
export async function shipmentsToRecord(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ order_id: string }>(`SELECT payload->>'order_id' AS order_id FROM temporal_outbox.outbox_events WHERE event_type = 'order_shipped' AND parked_at IS NULL`);
  return rows.map((r) => r.order_id);
}

/** How many of these orders have their shipment recorded (by the table's key). */
export async function countRecorded(pool: Pool, orderIds: string[]): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM shipments WHERE order_id = ANY($1::text[])', [orderIds]);
  return rows[0]!.n;
}

export async function countShipments(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM shipments');
  return rows[0]!.n;
}

/** The first message on the shipments topic, as bytes: the Confluent wire format's magic byte, schema id and Avro body, or what it is instead. */
export async function describeOneShipment(kafka: Kafka, topic: string): Promise<{ framed: boolean; text: string }> {
  const consumer = kafka.consumer({ groupId: `demo-shipment-peek-${crypto.randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const value = await new Promise<Buffer | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no shipment on the topic within 30 s')), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          clearTimeout(timer);
          resolve(message.value);
        },
      });
    });
    if (!value || value.length < 5) return { framed: false, text: 'an empty value' };
    const head = [...value.subarray(0, 5)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    if (value[0] !== 0) return { framed: false, text: `${value.length} bytes starting ${head}: NOT the registry's wire format (no magic byte 0)` };
    return { framed: true, text: `${value.length} bytes starting ${head}: magic byte 0, schema id ${value.readUInt32BE(1)}, then the Avro body (no JSON)` };
  } finally {
    await consumer.disconnect();
  }
}
