import crypto from 'node:crypto';

export interface ChunkSpan {
  topic: string;
  partition: number;
  firstOffset: string;
  lastOffset: string;
}

const MAX_READABLE_ID = 200;

/**
 * Deterministic id of the workflow that applies a set of chunks (topic, partition and offset
 * range each). A redelivered set with the same boundaries maps to the same id (attaching to the
 * run if it is still going); other boundaries give a new workflow whose events the inbox
 * recognises as duplicates. Readable when short (apply-group-orders.events/p0:100-599), hashed
 * when many partitions ride along.
 */
export function applyWorkflowId(p: { group: string; spans: ChunkSpan[] }): string {
  const spans = [...p.spans]
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1))
    .map((s) => `${s.topic}/p${s.partition}:${s.firstOffset}-${s.lastOffset}`)
    .join('_');
  const prefix = `apply-${p.group}-`;
  if (prefix.length + spans.length <= MAX_READABLE_ID) return prefix + spans;
  return `${prefix}h${crypto.createHash('sha256').update(spans).digest('hex').slice(0, 32)}`;
}
