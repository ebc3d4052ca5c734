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
  type ValidationContext,
} from '../inbox/handler';
export { runConsumerWorker, type ConsumerWorkerOptions } from '../../workers/consumer.worker';
// For a handler's validate: an offending value, quoted and shortened, to put in a rejection reason.
export { quote as quoteValue } from '../inbox/validate-envelope';
export { listParkedEvents, type ParkedEventRow } from '../inbox/list-parked-events';
export { listSkippedEventTypes, type SkippedEventTypeRow } from '../inbox/count-skipped-events';
export { topicForEventType, topicsForEventTypes, eventTopics } from '../kafka/topics';
