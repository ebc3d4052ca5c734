import type { Pool } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';

const EVENTS_PER_TICK = 40;
const TICK_MS = 200;

/**
 * Steady outbox traffic for the gray-failure rig: 40 credits of 1 every 200 ms (200 events/s, the
 * issue's rate), inserted as plain SQL by a connection that never goes through a fault link. Each
 * event carries a global sequence number, so each account's (key's) first deliveries can be
 * checked in order; `inserted` counts what was committed.
 */
export class GrayTraffic {
  inserted = 0;
  failed = 0;
  private running = true;
  private paused = false;
  private idle: Promise<void> = Promise.resolve();
  private readonly loop: Promise<void>;

  constructor(pool: Pool, accounts: number) {
    this.loop = (async () => {
      while (this.running) {
        if (!this.paused) {
          const tick = this.insert(pool, accounts);
          this.idle = tick;
          await tick;
        }
        await sleep(TICK_MS);
      }
    })();
  }

  /** Stops inserting; resolves once the insert in progress has committed or failed. */
  async pause(): Promise<void> {
    this.paused = true;
    await this.idle;
  }

  resume(): void {
    this.paused = false;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async insert(pool: Pool, accounts: number): Promise<void> {
    const from = this.inserted + 1;
    const to = this.inserted + EVENTS_PER_TICK;
    try {
      await pool.query(
        `INSERT INTO temporal_outbox.outbox_events (event_type, payload, event_key)
         SELECT 'payment_confirmed',
                jsonb_build_object('event_id', 'gray-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % $3::int, 'amount', 1, 'seq', g),
                (1 + g % $3::int)::text
           FROM generate_series($1::int, $2::int) g`,
        [from, to, accounts],
      );
      this.inserted = to;
    } catch {
      this.failed++;
    }
  }
}
