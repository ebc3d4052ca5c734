import type { Producer } from 'kafkajs';

/**
 * A producer whose sends in flight can be given up at once: `abandon()` makes every send waiting
 * and every later one reject (what kafkajs does with the request is left to it; its disconnect
 * waits for requests in flight, which on a dead link is the very wait to avoid). A relay worker
 * stepping aside abandons its membership's producer, so the sessions blocked in a send end now
 * rather than at the send's bound, and their shards move.
 *
 * Not `Promise.race([send, abandoned])` over one promise for the membership's life: each race
 * adds a reaction to that promise, kept until it settles, and each reaction holds its send's
 * promise and, through it, the async context of the activity that sent (its logger, its input).
 * A healthy membership never settles it, so a relay worker grew by every send it ever made, and
 * its full collections grew long enough to be its latency tail (docs/measurements/relay-log.md,
 * the s42 sections). Here a send is forgotten as soon as it settles.
 */
export function abandonableProducer(producer: Producer): { producer: Producer; abandon(): void } {
  const waiting = new Set<(err: Error) => void>();
  let abandonedWith: Error | undefined;
  // Once abandoned, a send is not even handed to kafkajs: its link is the one being given up.
  const givenUpWhenAbandoned = <T>(send: () => Promise<T>): Promise<T> => {
    if (abandonedWith) return Promise.reject(abandonedWith);
    return new Promise<T>((resolve, reject) => {
      waiting.add(reject);
      send().then(resolve, reject).finally(() => waiting.delete(reject));
    });
  };
  const wrapped: Producer = {
    ...producer,
    send: (record) => givenUpWhenAbandoned(() => producer.send(record)),
    sendBatch: (batch) => givenUpWhenAbandoned(() => producer.sendBatch(batch)),
  };
  const abandon = () => {
    abandonedWith ??= new Error('the Kafka producer was abandoned: the worker is stepping aside');
    for (const reject of waiting) reject(abandonedWith);
    waiting.clear();
  };
  return { producer: wrapped, abandon };
}
