import type { Producer } from 'kafkajs';

/**
 * A producer whose sends in flight can be given up at once: `abandon()` makes every send waiting
 * and every later one reject (what kafkajs does with the request is left to it; its disconnect
 * waits for requests in flight, which on a dead link is the very wait to avoid). A relay worker
 * stepping aside abandons its membership's producer, so the sessions blocked in a send end now
 * rather than at the send's bound, and their shards move.
 */
export function abandonableProducer(producer: Producer): { producer: Producer; abandon(): void } {
  let abandon: () => void = () => undefined;
  const abandoned = new Promise<never>((_, reject) => {
    abandon = () => reject(new Error('the Kafka producer was abandoned: the worker is stepping aside'));
  });
  abandoned.catch(() => undefined);
  const wrapped: Producer = {
    ...producer,
    send: (record) => Promise.race([producer.send(record), abandoned]),
    sendBatch: (batch) => Promise.race([producer.sendBatch(batch), abandoned]),
  };
  return { producer: wrapped, abandon: () => abandon() };
}
