import type { IHeaders, Producer } from 'kafkajs';
import type { Pool } from 'pg';
import type { Logger } from '../config/logger';
import { describeError, isRecordRejection } from '../../activities/relay/send-errors';
import { claimDeadLetters, type DeadLetterRow } from './claim-dead-letters';
import { recordDeadLetterOutcomes, type DeadLetterOutcome } from './record-dead-letter-outcome';

// Sends owed dead-letter copies and records what became of each. Never throws for Kafka: a copy
// Kafka does not take stays pending (or is given up) in its parked row, and the caller — the
// chunk that just parked the message, or the periodic sweep — carries on.

export interface DeadLetterTarget {
  producer: Producer;
  /** Where copies of messages parked from now on go (KAFKA_DEAD_LETTER_TOPIC); each row keeps the topic it was parked for. */
  topic: string;
  /** First retry wait; doubles per attempt up to 64× (CONSUMER_DEAD_LETTER_RETRY_MS). */
  retryMs: number;
  /** Attempts after which a copy is given up (CONSUMER_DEAD_LETTER_MAX_ATTEMPTS). */
  maxAttempts: number;
}

/** Longer than one send can take (kafkajs' 30 s request timeout): no one else claims a copy still in flight. */
export const DEAD_LETTER_LEASE_MS = 60_000;
/** Copies sent at once; each is its own request so a refusal is pinned on its own row. */
const SEND_CONCURRENCY = 16;
const CLAIM_LIMIT = 200;

export interface DeliveryReport {
  sent: number;
  pending: number;
  failed: number;
}

/** Delivers the due copies of `consumer` (only `ids`, when given), one claim of up to 200 rows. */
export async function deliverDeadLetters(
  pool: Pool,
  target: DeadLetterTarget,
  opts: { consumer: string; ids?: string[] },
  logger: Logger,
): Promise<DeliveryReport> {
  if (opts.ids?.length === 0) return { sent: 0, pending: 0, failed: 0 };
  const rows = await claimDeadLetters(pool, { consumer: opts.consumer, ids: opts.ids, limit: CLAIM_LIMIT, leaseMs: DEAD_LETTER_LEASE_MS });
  const outcomes: DeadLetterOutcome[] = [];
  for (let i = 0; i < rows.length; i += SEND_CONCURRENCY) {
    outcomes.push(...(await Promise.all(rows.slice(i, i + SEND_CONCURRENCY).map((row) => sendOne(target, row)))));
  }
  await recordDeadLetterOutcomes(pool, outcomes);
  const report = { sent: 0, pending: 0, failed: 0 };
  for (const o of outcomes) report[o.state]++;
  if (report.pending + report.failed > 0) {
    const errors = [...new Set(outcomes.flatMap((o) => (o.state === 'sent' ? [] : [o.error])))].slice(0, 3);
    logger.warn({ ...report, topic: target.topic, errors }, 'dead-letter copies not written; the parked rows hold the events (pending copies are retried)');
  }
  return report;
}

async function sendOne(target: DeadLetterTarget, row: DeadLetterRow): Promise<DeadLetterOutcome> {
  try {
    await target.producer.send({ topic: row.dead_letter_topic, messages: [deadLetterMessage(row)] });
    return { id: row.id, state: 'sent' };
  } catch (err) {
    const error = describeError(err);
    // The broker refused the record itself (too large, invalid): no retry can change that.
    if (isRecordRejection(err)) return { id: row.id, state: 'failed', error };
    if (row.dead_letter_attempts >= target.maxAttempts) return { id: row.id, state: 'failed', error: `gave up after ${row.dead_letter_attempts} attempts: ${error}` };
    return { id: row.id, state: 'pending', error, retryInMs: target.retryMs * 2 ** Math.min(row.dead_letter_attempts - 1, 6) };
  }
}

/** The original message, byte for byte, plus why and where it was parked. */
export function deadLetterMessage(row: DeadLetterRow): { key: Buffer | null; value: Buffer | null; headers: IHeaders } {
  const headers: IHeaders = {};
  for (const [name, values] of Object.entries(row.dead_letter_headers ?? {})) {
    const buffers = values.map((v) => Buffer.from(v, 'base64'));
    headers[name] = buffers.length === 1 ? buffers[0]! : buffers;
  }
  headers['dlq-reason'] = row.reason;
  headers['dlq-source'] = `${row.topic}/${row.kafka_partition}/${row.kafka_offset}`;
  // A copy can be sent twice only if a process died between Kafka's ack and recording it: this
  // id lets whoever reads the dead-letter topic drop the repeat.
  headers['dlq-parked-id'] = row.id;
  return { key: row.dead_letter_key, value: row.dead_letter_value, headers };
}
