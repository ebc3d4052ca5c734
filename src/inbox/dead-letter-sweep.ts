import type { Pool } from 'pg';
import type { Logger } from '../config/logger';
import { deliverDeadLetters, type DeadLetterTarget } from './deliver-dead-letters';

/**
 * Retries the consumer's pending dead-letter copies every `target.retryMs` (the ones whose
 * backoff is over), until stopped. Several consumer processes may sweep at once: the claim's
 * lease gives each copy to one of them.
 */
export function startDeadLetterSweep(pool: Pool, target: DeadLetterTarget, consumer: string, logger: Logger): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    deliverDeadLetters(pool, target, { consumer }, logger)
      .then((r) => {
        if (r.sent > 0) logger.info({ ...r, topic: target.topic }, 'dead-letter sweep wrote pending copies');
      })
      .catch((err: Error) => logger.warn({ err: err.message }, 'dead-letter sweep failed; next round retries'))
      .finally(() => (running = false));
  }, target.retryMs);
  timer.unref();
  return () => clearInterval(timer);
}
