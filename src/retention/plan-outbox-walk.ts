import type { SqlExecutor } from '../db/executor';
import { maxOutboxId, probeOutboxId } from './queries/outbox-id-probe';

export interface OutboxWalk {
  /** First id to visit (the table's smallest), or undefined when the table is empty. */
  fromId?: number;
  /** Exclusive end of the walk. */
  untilId?: number;
}

/**
 * The key range a retention run walks: from the smallest id up to the first id created at or
 * after the cutoff. A row published before the cutoff was created before it, so nothing above
 * that point can qualify; walking the window's recent rows would be wasted work every run.
 *
 * Found by binary search over the primary key (about 25 one-row probes for 12 million rows)
 * because created_at has no index and needs none. Ids follow created_at only roughly (a long
 * transaction can take a low id and commit late), but the end point only bounds the walk: the
 * DELETE's own `published_at < cutoff` decides what goes, and a straggler above the end is
 * caught by a later run, whose cutoff and end have moved on.
 */
export async function planOutboxWalk(db: SqlExecutor, cutoff: Date): Promise<OutboxWalk> {
  const first = await probeOutboxId(db, 0);
  if (!first) return {};
  const last = await maxOutboxId(db);
  if (last === undefined) return {};
  let lo = first.id;
  let hi = last + 1;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const row = await probeOutboxId(db, mid);
    if (!row || row.createdAt >= cutoff) hi = mid;
    else lo = row.id + 1;
  }
  return { fromId: first.id, untilId: lo };
}
