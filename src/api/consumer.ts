// Public API: consumers. Define one handler per event type; the consumer worker wraps each in
// the inbox guard and runs it as an idempotent Temporal activity.
export {
  defineHandler,
  type AnyEventHandler,
  type EventHandler,
  type HandlerContext,
  type InboxEvent,
  type Rejection,
  type Validation,
} from '../inbox/handler';
export { runConsumerWorker, type ConsumerWorkerOptions } from '../../workers/consumer.worker';
export { paymentConfirmedHandler, UNKNOWN_ACCOUNT_REASON } from '../../examples/payments/credit-handler';
export { orderShippedHandler, ORDER_SHIPPED, type ShipmentData } from '../../examples/shipping/order-shipped-handler';
export type { CreditData } from '../../examples/payments/validate-credit';
export { listParkedEvents, type ParkedEventRow } from '../inbox/list-parked-events';
export { listSkippedEventTypes, type SkippedEventTypeRow } from '../inbox/count-skipped-events';
export { topicForEventType, topicsForEventTypes, eventTopics } from '../kafka/topics';
