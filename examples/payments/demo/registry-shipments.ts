import crypto from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Pool } from 'pg';
import { enqueue, inTransaction, SchemaRegistryClient } from 'temporal-outbox';
import { OrderShipped, ORDER_SHIPPED } from '../../shipping/order-shipped-event';

// `npm start -- --with-registry`: the shipping example's order_shipped events on a topic of their
// own, encoded in Avro through the local Schema Registry (Apicurio) by the relay and decoded through
// it by the consumer, beside the payments in plain JSON. Opt-in: the first run builds the registry
// from Maven Central (minutes), docs/demo.md.

export const SHIPMENTS_TOPIC = 'orders.events';

/** order_shipped as an Avro record: every field of the payload, the envelope's included. */
export const ORDER_SHIPPED_AVRO = {
  type: 'record',
  name: 'OrderShipped',
  namespace: 'shipping',
  fields: ['event_id', 'type', 'order_id', 'carrier', 'tracking_number', 'shipped_at'].map((name) => ({ name, type: 'string' })),
};

/** The workers' settings: order_shipped routed to its topic, that topic Avro through the registry, the consumer applying both types. */
export function registryDemoEnv(registryUrl: string): Record<string, string> {
  return {
    KAFKA_TOPIC_ROUTES: `${ORDER_SHIPPED}=${SHIPMENTS_TOPIC}`,
    SCHEMA_REGISTRY_URL: registryUrl,
    SCHEMA_REGISTRY_TOPICS: `${SHIPMENTS_TOPIC}=avro`,
    CONSUMER_HANDLERS: `payment_confirmed,${ORDER_SHIPPED}`,
  };
}

/** Registers the schema under the topic's subject, as a deployment step would (idempotent); returns its id. */
export function registerShipmentSchema(registryUrl: string): Promise<number> {
  return new SchemaRegistryClient({ url: registryUrl, requestTimeoutMs: 10_000 }).register(`${SHIPMENTS_TOPIC}-value`, JSON.stringify(ORDER_SHIPPED_AVRO), 'AVRO');
}

/** One shipment: the typed order_shipped event in its own transaction. */
export async function shipOneDemoOrder(pool: Pool): Promise<void> {
  const orderId = `ord_${crypto.randomUUID()}`;
  await inTransaction(pool, (client) =>
    enqueue(client, OrderShipped, { order_id: orderId, carrier: 'demo-post', tracking_number: `TRK${crypto.randomInt(1e9)}`, shipped_at: new Date().toISOString() }),
  );
}

export async function countShipments(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM shipments');
  return rows[0]!.n;
}

/** The first message on the shipments topic, as bytes: the Confluent wire format's magic byte, schema id and Avro body. */
export async function describeOneShipment(kafka: Kafka): Promise<string> {
  const consumer = kafka.consumer({ groupId: `demo-shipment-peek-${crypto.randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: SHIPMENTS_TOPIC, fromBeginning: true });
    const value = await new Promise<Buffer | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no shipment on the topic within 30 s')), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          clearTimeout(timer);
          resolve(message.value);
        },
      });
    });
    if (!value || value.length < 5) return 'an empty value';
    const head = [...value.subarray(0, 5)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    return `${value.length} bytes starting ${head}: magic byte 0, schema id ${value.readUInt32BE(1)}, then the Avro body (no JSON)`;
  } finally {
    await consumer.disconnect();
  }
}
