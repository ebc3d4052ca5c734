import { setTimeout as sleep } from 'node:timers/promises';
import { HEADERS } from '../../../src/kafka/message-format';
import { readLedger } from '../../../tools/soak/tally';
import { readWholeTopic } from '../relay-harness';
import { Backlog } from './backlog';
import type { GrayRig } from './rig';

export interface Checkpoint {
  /** Events committed so far. */
  events: number;
  /** Committed events no consumer applied (must be 0). */
  lost: number;
  /** Credits applied more than once, from the balances (must be 0). */
  doubleApplied: number;
  /** Extra copies on the topic (re-sends after a fault; the inbox absorbs them). */
  repeats: number;
  /** Keys whose first deliveries were not in commit order (must be 0). */
  keysOutOfOrder: number;
  /** The pipeline drained within the bound (3 minutes). */
  drained: boolean;
}

/**
 * Everything so far, checked: traffic paused, the pipeline drained, then lost, double-applied,
 * repeats and per-key order of first deliveries counted from the database and the topic itself.
 * Traffic resumes afterwards unless `resume` is false.
 */
export async function checkpoint(rig: GrayRig, resume = true): Promise<Checkpoint> {
  await rig.traffic.pause();
  try {
    const backlog = new Backlog(rig.db.pool);
    const deadline = Date.now() + 180_000;
    let drained = false;
    while (Date.now() < deadline) {
      if (!(await backlog.oldestUnapplied())) {
        drained = true;
        break;
      }
      await sleep(500);
    }
    const ledger = await readLedger(rig.db.pool);
    const messages = await readWholeTopic(rig.topic.topic, 120_000);
    const firstSeqByKey = new Map<string, number[]>();
    const seen = new Set<string>();
    for (const m of messages) {
      const id = m.headers[HEADERS.eventId]!;
      if (seen.has(id)) continue;
      seen.add(id);
      const list = firstSeqByKey.get(m.key) ?? [];
      list.push((JSON.parse(m.value) as { seq: number }).seq);
      firstSeqByKey.set(m.key, list);
    }
    const keysOutOfOrder = [...firstSeqByKey.values()].filter((seqs) => seqs.some((s, i) => i > 0 && s < seqs[i - 1]!)).length;
    return { events: ledger.events.total, lost: ledger.lost, doubleApplied: ledger.doubleApplied, repeats: messages.length - seen.size, keysOutOfOrder, drained };
  } finally {
    if (resume) rig.traffic.resume();
  }
}
