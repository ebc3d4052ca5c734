import type { AsyncApiSource } from 'temporal-outbox';
import { orderShippedHandler } from '../shipping/order-shipped-handler';
import { OrderShipped } from '../shipping/order-shipped-event';
import { paymentConfirmedHandler } from './credit-handler';
import { PaymentConfirmed } from './event-types';

// What `temporal-outbox asyncapi --module examples/payments/asyncapi.ts` describes: the example's
// event types and its consumer's handlers. The committed document, examples/payments/asyncapi.json,
// is this with KAFKA_TOPIC=payments.events and KAFKA_TOPIC_ROUTES=order_shipped=orders.events (test/unit/asyncapi.unit.test.ts
// keeps it in sync).
export const asyncApi: AsyncApiSource = {
  info: { title: 'temporal-outbox payments example', version: '1.0.0', description: 'Payments confirmed by the payments service and orders shipped, as the example puts them on Kafka and applies them.' },
  events: [PaymentConfirmed, OrderShipped],
  handlers: [paymentConfirmedHandler({ maxCreditAmount: 100_000_000_000 }), orderShippedHandler()],
};
