import type { Pool } from 'pg';

// The consumer's inbox name (consumer.inboxName's default, which the rig's consumers keep).
const INBOX = 'payments-credit';

/**
 * Where the pipeline stands end to end: the oldest outbox event no consumer has applied yet. One
 * indexed probe per call: every id below `floor` is known applied, so each look starts there.
 */
export class Backlog {
  private floor = 0;

  constructor(private readonly pool: Pool) {}

  /** The newest outbox id committed so far (0 when none). */
  async newestId(): Promise<number> {
    return Number((await this.pool.query(`SELECT coalesce(max(id), 0) AS id FROM temporal_outbox.outbox_events`)).rows[0].id);
  }

  /** The oldest event not applied yet (its id and age in ms), or undefined when all are applied. */
  async oldestUnapplied(): Promise<{ id: number; ageMs: number } | undefined> {
    const newest = await this.newestId();
    const { rows } = await this.pool.query<{ id: string; age_ms: string }>(
      `SELECT o.id, extract(epoch FROM clock_timestamp() - o.created_at) * 1000 AS age_ms
         FROM temporal_outbox.outbox_events o
        WHERE o.id >= $1
          AND NOT EXISTS (SELECT 1 FROM temporal_outbox.inbox_processed_events i WHERE i.consumer = $2 AND i.event_id = o.payload->>'event_id')
        ORDER BY o.id LIMIT 1`,
      [this.floor, INBOX],
    );
    const row = rows[0];
    if (!row) {
      this.floor = newest + 1;
      return undefined;
    }
    this.floor = Number(row.id);
    return { id: Number(row.id), ageMs: Math.round(Number(row.age_ms)) };
  }
}
