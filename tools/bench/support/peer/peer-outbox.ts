import { DatabaseSetup } from 'pg-transactional-outbox';
import type { Pool } from 'pg';
import type { PeerListenerOptions } from './peer-settings';

// pg-transactional-outbox's outbox table, created with the package's own DatabaseSetup SQL (the
// statements its README points to), in a scratch database beside ours on the same server. The
// names come from the benchmark (runId), never from input, so they can be part of the DDL.

export type PeerOutboxNames = Omit<PeerListenerOptions, 'kind' | 'databaseUrl' | 'batchSize'>;

export async function createPeerOutbox(pool: Pool, database: string, role: string, n: PeerOutboxNames): Promise<void> {
  const setup = { outboxOrInbox: 'outbox' as const, database, schema: 'public', table: n.table, listenerRole: role };
  await pool.query(DatabaseSetup.dropAndCreateTable(setup));
  await pool.query(DatabaseSetup.createPollingFunction({ ...setup, nextMessagesName: n.nextMessagesFunction }));
  await pool.query(DatabaseSetup.setupPollingIndexes({ ...setup, nextMessagesName: n.nextMessagesFunction }));
}

/** The publication of the logical-replication listener (its slot is made per run: createPeerSlot). */
export async function createPeerReplication(pool: Pool, database: string, role: string, n: PeerOutboxNames): Promise<void> {
  const setup = { outboxOrInbox: 'outbox' as const, database, schema: 'public', table: n.table, listenerRole: role, publication: n.publication, replicationSlot: n.slot };
  await pool.query(DatabaseSetup.setupReplicationCore(setup));
}

/**
 * A fresh slot for one run (in a statement of its own, as the package asks): a slot kept between
 * runs would make the next run's listener first decode all the WAL written meanwhile, ours included.
 */
export async function createPeerSlot(pool: Pool, slot: string): Promise<void> {
  await pool.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
}

/** A slot left behind would hold the server's WAL forever; every run drops its own. */
export async function dropPeerSlot(pool: Pool, slot: string): Promise<void> {
  await pool.query(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active`, [slot]);
}

/** Same event shape as ours: payload {event_id, type, account_id, amount}; the account is the aggregate and segment (per-key order). */
const INSERT_GENERATED = (table: string) => `
  INSERT INTO public.${table} (id, aggregate_type, aggregate_id, message_type, segment, payload)
  SELECT gen_random_uuid(), 'account', (g % 1000)::text, 'payment_confirmed', (g % 1000)::text,
         jsonb_build_object('event_id', md5(random()::text || g), 'type', 'payment_confirmed', 'account_id', g % 1000, 'amount', 100)
    FROM generate_series($1::int, $2::int) g`;

/** Commits n peer outbox rows in 10,000-row transactions, as insertBacklog does for ours. */
export async function insertPeerBacklog(pool: Pool, table: string, n: number): Promise<void> {
  for (let from = 1; from <= n; from += 10_000) await pool.query(INSERT_GENERATED(table), [from, Math.min(n, from + 9_999)]);
}

/** One transaction of given ids (the latency runs' offered load); returns when COMMIT has. */
export async function insertPeerEvents(pool: Pool, table: string, ids: string[], accountOf: (i: number) => number): Promise<void> {
  await pool.query(
    `INSERT INTO public.${table} (id, aggregate_type, aggregate_id, message_type, segment, payload)
     SELECT id::uuid, 'account', a::text, 'payment_confirmed', a::text,
            jsonb_build_object('event_id', id, 'type', 'payment_confirmed', 'account_id', a, 'amount', 1)
       FROM unnest($1::text[], $2::int[]) AS t(id, a)`,
    [ids, ids.map((_, i) => accountOf(i))],
  );
}

/**
 * Whether any row is still unprocessed: the first NULL in the package's own `processed_at` index.
 * Asked every 25 ms during a run on the PostgreSQL being measured, so it must be as cheap as ours
 * (tools/bench/support/outbox-backlog.ts); a count of the table each time was a scan billed to the run.
 */
export async function peerAnyPending(pool: Pool, table: string): Promise<boolean> {
  return (await pool.query<{ pending: boolean }>(`SELECT EXISTS (SELECT 1 FROM public.${table} WHERE processed_at IS NULL) AS pending`)).rows[0]!.pending;
}

/** Rows not yet processed (once, when a listener did not drain in time). */
export async function peerPendingCount(pool: Pool, table: string): Promise<number> {
  return Number((await pool.query(`SELECT count(*) AS n FROM public.${table} WHERE processed_at IS NULL`)).rows[0].n);
}
