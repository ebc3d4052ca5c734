import type { SqlExecutor } from '../db/executor';

// Claims dead-letter copies that are due, for one send attempt. The claim is a lease, not a
// held transaction: it moves the row's due time past the attempt (and counts the attempt), so a
// second claimer (another consumer process, a redelivered chunk, the next sweep) skips the row
// until the lease runs out. Only a process that dies between Kafka's ack and recording the
// outcome leaves a copy to be sent again; the `dlq-parked-id` header lets a reader drop that repeat.

export interface DeadLetterRow {
  id: string;
  topic: string;
  kafka_partition: number;
  kafka_offset: string;
  reason: string;
  dead_letter_topic: string;
  dead_letter_key: Buffer | null;
  dead_letter_value: Buffer | null;
  dead_letter_headers: Record<string, string[]> | null;
  dead_letter_attempts: number;
}

export const CLAIM_DEAD_LETTERS_SQL = `
UPDATE temporal_outbox.inbox_parked_events p
   SET dead_letter_due_at = now() + make_interval(secs => $4::double precision / 1000),
       dead_letter_attempts = p.dead_letter_attempts + 1
 WHERE p.id IN (
         SELECT id FROM temporal_outbox.inbox_parked_events
          WHERE dead_letter_state = 'pending' AND dead_letter_due_at <= now() AND consumer = $1
            AND ($2::bigint[] IS NULL OR id = ANY($2::bigint[]))
          ORDER BY dead_letter_due_at, id
          LIMIT $3
          FOR UPDATE SKIP LOCKED)
RETURNING p.id::text, p.topic, p.kafka_partition, p.kafka_offset::text, p.reason,
          p.dead_letter_topic, p.dead_letter_key, p.dead_letter_value, p.dead_letter_headers, p.dead_letter_attempts`;

/** Due copies of this consumer (only `ids`, when given), at most `limit`, leased for `leaseMs`. */
export async function claimDeadLetters(db: SqlExecutor, opts: { consumer: string; ids?: string[]; limit: number; leaseMs: number }): Promise<DeadLetterRow[]> {
  const { rows } = await db.query<DeadLetterRow>(CLAIM_DEAD_LETTERS_SQL, [opts.consumer, opts.ids ?? null, opts.limit, opts.leaseMs]);
  return rows;
}

export const OWED_DEAD_LETTER_IDS_SQL = `
SELECT id::text FROM temporal_outbox.inbox_parked_events
 WHERE consumer = $1 AND topic = $2 AND kafka_partition = $3 AND kafka_offset = ANY($4::bigint[])
   AND dead_letter_state = 'pending'`;

/** The parked rows at these offsets whose copy is still owed (just parked, or left by an earlier attempt). */
export async function owedDeadLetterIds(db: SqlExecutor, where: { consumer: string; topic: string; partition: number; offsets: string[] }): Promise<string[]> {
  if (where.offsets.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(OWED_DEAD_LETTER_IDS_SQL, [where.consumer, where.topic, where.partition, where.offsets]);
  return rows.map((r) => r.id);
}
