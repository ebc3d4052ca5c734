// Where a partition's fetched messages are cut into chunks: at most `maxEvents` messages and, past
// the first message, at most `maxBytes` of message values. A chunk's valid events become part of
// one applyEventsWorkflow's input, which Temporal refuses beyond its payload limit (2 MB by
// default): a count alone does not keep large events under it. The value's size stands in for what
// an event adds to the input (its handler's data comes from it; ids, hashes and offsets add a
// little, counted as EVENT_OVERHEAD_BYTES).

/** What an event adds to a workflow input beside its handler's data: id, type, offset, payload hash, JSON punctuation. */
export const EVENT_OVERHEAD_BYTES = 128;

/** The input bytes one message stands for. */
export function eventBytes(value: { length: number } | null | undefined): number {
  return (value?.length ?? 0) + EVENT_OVERHEAD_BYTES;
}

/** End indices (exclusive) of consecutive chunks covering `sizes`. */
export function chunkEnds(sizes: readonly number[], maxEvents: number, maxBytes: number): number[] {
  const ends: number[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (i > start && (i - start >= maxEvents || bytes + sizes[i]! > maxBytes)) {
      ends.push(i);
      start = i;
      bytes = 0;
    }
    bytes += sizes[i]!;
  }
  if (sizes.length > start) ends.push(sizes.length);
  return ends;
}
