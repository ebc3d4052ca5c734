import type { Attributes } from '@opentelemetry/api';

// OpenTelemetry's messaging semantic conventions (attribute names as in semconv 1.27 onwards;
// the messaging conventions are still marked Development), in one place for the relay's and the
// consumer's spans: span name `<operation> <destination>`, PRODUCER for a send, CONSUMER for a
// process, `error.type` on a span that ended in failure (docs/observability.md#span-conventions).

export const MESSAGING = {
  system: 'messaging.system',
  operationName: 'messaging.operation.name',
  operationType: 'messaging.operation.type',
  destinationName: 'messaging.destination.name',
  partitionId: 'messaging.destination.partition.id',
  messageId: 'messaging.message.id',
  kafkaMessageKey: 'messaging.kafka.message.key',
  kafkaOffset: 'messaging.kafka.offset',
  consumerGroup: 'messaging.consumer.group.name',
  batchMessageCount: 'messaging.batch.message_count',
  errorType: 'error.type',
} as const;

export type MessagingOperation = 'send' | 'process';

/** The attributes every messaging span of ours starts with. */
export function messagingAttributes(operation: MessagingOperation, destination: string | undefined): Attributes {
  const attributes: Attributes = { [MESSAGING.system]: 'kafka', [MESSAGING.operationName]: operation, [MESSAGING.operationType]: operation };
  if (destination !== undefined) attributes[MESSAGING.destinationName] = destination;
  return attributes;
}

/** `send orders.events`; the operation alone when a span covers several topics. */
export function messagingSpanName(operation: MessagingOperation, destination: string | undefined): string {
  return destination === undefined ? operation : `${operation} ${destination}`;
}

/** A low-cardinality class of an error, for `error.type`: kafkajs' error type (e.g. MESSAGE_TOO_LARGE), else its name. */
export function errorType(error: unknown): string {
  if (error instanceof Error) {
    const type = (error as { type?: unknown }).type;
    return typeof type === 'string' && type !== '' ? type : error.name;
  }
  return '_OTHER';
}
