/**
 * Deterministic id of the workflow that credits one chunk of one partition. A redelivered chunk
 * with the same boundaries maps to the same id (attaching to the run if it is still going);
 * different boundaries give a new workflow whose events the inbox recognises as duplicates.
 */
export function creditWorkflowId(p: { group: string; topic: string; partition: number; firstOffset: string; lastOffset: string }): string {
  return `credit-${p.group}-${p.topic}-p${p.partition}-${p.firstOffset}-${p.lastOffset}`;
}
