/** What kafkajs's `commitOffsetsIfNecessary(offsets)` takes: any topics and partitions in one request. */
export interface OffsetsToCommit {
  topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
}
type SendCommit = (offsets: OffsetsToCommit) => Promise<void>;

/**
 * The offset commits requested in one turn of the event loop, sent as one OffsetCommit request.
 * A flight carries chunks of several partitions; when it returns each partition commits its own
 * offset, and one request each meant as many round trips to the group coordinator, each appended
 * to __consumer_offsets, for one flight. Every caller's promise settles with the shared request.
 * A partition commits its chunks in order, one after the other (partition-sequence.ts), so one
 * request never carries two offsets of a partition; if it did, the later offset would win.
 */
export class OffsetCommitGathering {
  private gathering: { send: SendCommit; offsets: Map<string, { topic: string; partition: number; offset: string }>; done: Promise<void> } | undefined;

  /** `send` is the commit function of the kafkajs batch the chunk came in (all of one consumer's commit the same way). */
  commit(send: SendCommit, topic: string, partition: number, offset: string): Promise<void> {
    if (!this.gathering) {
      const offsets = new Map<string, { topic: string; partition: number; offset: string }>();
      const gathering = { send, offsets, done: Promise.resolve() };
      gathering.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.gathering = undefined;
        return gathering.send(toRequest(offsets.values()));
      });
      this.gathering = gathering;
    }
    const key = `${topic}|${partition}`;
    const earlier = this.gathering.offsets.get(key);
    if (!earlier || BigInt(offset) > BigInt(earlier.offset)) this.gathering.offsets.set(key, { topic, partition, offset });
    this.gathering.send = send;
    return this.gathering.done;
  }
}

function toRequest(offsets: Iterable<{ topic: string; partition: number; offset: string }>): OffsetsToCommit {
  const byTopic = new Map<string, { partition: number; offset: string }[]>();
  for (const { topic, partition, offset } of offsets) byTopic.set(topic, [...(byTopic.get(topic) ?? []), { partition, offset }]);
  return { topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })) };
}
