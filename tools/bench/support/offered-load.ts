import crypto from 'node:crypto';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A steady offered load: `perTransaction` events committed every perTransaction/rate seconds
 * (10 per transaction every 10 ms = 1,000 events/s) for `seconds`, each transaction's commit
 * time taken by the client when COMMIT returns. Ids are UUIDs so any outbox can take them.
 */
export async function offerLoad(opts: { rate: number; seconds: number; perTransaction?: number; commit: (ids: string[]) => Promise<unknown> }) {
  const perTx = opts.perTransaction ?? 10;
  const tickMs = (perTx * 1000) / opts.rate;
  const total = opts.rate * opts.seconds;
  const committedAt = new Map<string, number>();
  const inflight: Promise<void>[] = [];
  const start = Date.now();
  for (let sent = 0, tick = 0; sent < total; sent += perTx, tick++) {
    const due = start + tick * tickMs;
    if (due > Date.now()) await sleep(due - Date.now());
    const ids = Array.from({ length: perTx }, () => crypto.randomUUID());
    inflight.push(
      opts.commit(ids).then(() => {
        const now = Date.now();
        for (const id of ids) committedAt.set(id, now);
      }),
    );
  }
  await Promise.all(inflight);
  return { committedAt, offeredPerSecond: Math.round(total / ((Date.now() - start) / 1000)), total };
}

/** Latencies (ms, sorted) of the ids that arrived, joined on id. */
export function joinLatencies(committedAt: Map<string, number>, arrivedAt: Map<string, number>): number[] {
  return [...committedAt].flatMap(([id, c]) => (arrivedAt.has(id) ? [arrivedAt.get(id)! - c] : [])).sort((a, b) => a - b);
}
