import type { Config } from '../config/env';

/**
 * The longest one producer send may take before the relay gives up on it: a connect, a metadata
 * request and the produce request, each bounded by kafkajs (`KAFKA_CONNECTION_TIMEOUT_MS`,
 * `KAFKA_REQUEST_TIMEOUT_MS`), plus a margin. kafkajs bounds each request, but a send that waits
 * on a connection kafkajs still believes open (a link that drops the worker's bytes) is bounded
 * only by the socket's silence check; this bound holds whatever kafkajs does inside.
 */
export function sendBoundMs(config: Config): number {
  const kafka = config.links.kafka;
  return kafka.connectionTimeoutMs + 2 * kafka.requestTimeoutMs + 5_000;
}

/** Resolves or rejects with `work`, or rejects once `ms` passed without an answer (the work is left to finish on its own). */
export async function boundedCall<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
