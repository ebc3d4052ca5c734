import type { Pool } from 'pg';

// How long the relay and the consumer stood still while they had work, sampled from the database
// while traffic flows: the relay's progress is its count of published rows, the consumer's its
// count of inbox rows. A stall is the time from the last step forward to the next one, counted
// only while work was waiting (pending rows for the relay, published but unapplied for the consumer).

export interface StallMonitor {
  /** The longest stall of each side since the last reset, in ms, the one still running included. */
  longest(): { relayMs: number; consumerMs: number };
  /** Forgets the stalls so far (between faults), keeping the counts. */
  reset(): void;
  stop(): Promise<void>;
}

interface Side {
  count: number;
  since: number;
  longest: number;
}

export function monitorStalls(pool: Pool, consumer: string, everyMs = 250): StallMonitor {
  const now = () => Date.now();
  const relay: Side = { count: -1, since: now(), longest: 0 };
  const applier: Side = { count: -1, since: now(), longest: 0 };
  let running = true;
  const step = (side: Side, count: number, hasWork: boolean) => {
    const t = now();
    if (count > side.count || !hasWork) {
      side.count = count;
      side.since = t;
    } else {
      side.longest = Math.max(side.longest, t - side.since);
    }
  };
  const loop = (async () => {
    while (running) {
      try {
        const { rows: [r] } = await pool.query<{ published: number; pending: number; applied: number }>(
          `SELECT count(*) FILTER (WHERE published_at IS NOT NULL)::int AS published,
                  count(*) FILTER (WHERE published_at IS NULL)::int AS pending,
                  (SELECT count(*)::int FROM temporal_outbox.inbox_processed_events WHERE consumer = $1) AS applied
             FROM temporal_outbox.outbox_events`,
          [consumer],
        );
        step(relay, r!.published, r!.pending > 0);
        step(applier, r!.applied, r!.published > r!.applied);
      } catch {
        /* a sample lost to a busy database is a gap, not a stall of the pipeline */
      }
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    longest: () => ({ relayMs: relay.longest, consumerMs: applier.longest }),
    reset: () => {
      relay.longest = 0;
      applier.longest = 0;
    },
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
