import crypto from 'node:crypto';

export interface ChunkSpan {
  partition: number;
  firstOffset: string;
  lastOffset: string;
}

const MAX_READABLE_ID = 200;

/**
 * Deterministic id of the workflow that credits a set of chunks (partition + offset range each).
 * A redelivered set with the same boundaries maps to the same id (attaching to the run if it is
 * still going); other boundaries give a new workflow whose events the inbox recognises as
 * duplicates. Readable when short (p0:100-599_p3:40-80), hashed when many partitions ride along.
 */
export function creditWorkflowId(p: { group: string; topic: string; spans: ChunkSpan[] }): string {
  const spans = [...p.spans]
    .sort((a, b) => a.partition - b.partition)
    .map((s) => `p${s.partition}:${s.firstOffset}-${s.lastOffset}`)
    .join('_');
  const prefix = `credit-${p.group}-${p.topic}-`;
  if (prefix.length + spans.length <= MAX_READABLE_ID) return prefix + spans;
  return `${prefix}h${crypto.createHash('sha256').update(spans).digest('hex').slice(0, 32)}`;
}
