import type { EventBatch, EventBatchResult } from '../../workflows/inbox/contract';
import { withApplyBatchSpan } from '../observability/apply-spans';
import { applyWorkflowId, type ChunkSpan } from './apply-workflow-id';

// Group commit for events. kafkajs hands us one batch per partition, concurrently; one
// workflow per partition batch means six partitions = six workflows in flight, and the Temporal
// dev server (one shard, one SQLite connection) then spends its time queueing them: six
// concurrent single-event workflows each took several times as long as one alone
// (docs/measurements/consumer-log.md, "Figures behind code comments"). So the
// chunks of every partition this process owns ride together: a flight leaves at once when
// nothing is in flight (low latency at low load), and while one is in flight the next one
// gathers everything that arrives (large batches, few workflows at high load).
//
// kafkajs hands out every partition's batch of one fetch at once, then waits for all of them
// before it fetches again. Leaving with the first chunk alone would make the others of the same
// fetch wait for that flight and then take a second one: two workflow round trips per fetch on
// the critical path. The coalescing window (windowMs) lets a flight that would leave at once wait
// that long for the rest of the fetch; 0 leaves at once.

/** The valid events of one chunk (one topic partition), index-aligned. */
export interface ChunkEvents extends ChunkSpan {
  eventIds: string[];
  eventTypes: string[];
  offsets: string[];
  data: unknown[];
  payloadHashes: string[];
  /** Each event's `traceparent` header (W3C trace context), null when it came without one. */
  traceparents: (string | null)[];
  /** What these events add to a workflow input, estimated from their messages (src/inbox/chunk-bounds.ts). */
  bytes: number;
  /** When the consumer got the chunk from Kafka (epoch ms); logged with the flight, for latency breakdowns. */
  receivedAt?: number;
}

/** Where a flight's events came from and when the consumer got them (the flight's log line). */
export interface FlightSpan extends ChunkSpan {
  receivedAt?: number;
}

export interface FlightReport extends EventBatchResult {
  workflowId: string;
  events: number;
  chunks: number;
  partitions: string[];
  /** When the workflow start was sent (epoch ms). */
  startedAt: number;
  workflowMs: number;
  /** The workflow's first task came back with its start, to this process's worker (no poll). */
  eagerlyStarted: boolean;
  spans: FlightSpan[];
}

/** Runs one applyEventsWorkflow and returns its result (the effect is durable when it returns). */
export type RunApplyWorkflow = (workflowId: string, batch: EventBatch) => Promise<{ result: EventBatchResult; eagerlyStarted: boolean }>;

interface Waiting {
  chunk: ChunkEvents;
  resolve: (report: FlightReport) => void;
  reject: (err: unknown) => void;
}

export class EventCoalescer {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private window: NodeJS.Timeout | undefined;

  constructor(
    private readonly run: RunApplyWorkflow,
    private readonly opts: {
      consumer: string;
      group: string;
      maxEvents: number;
      /** Bound on a flight's estimated input bytes (the sum of its chunks' `bytes`); none when absent. */
      maxBytes?: number;
      maxInFlight: number;
      /** How long a flight that would leave at once waits for more chunks (0: leaves at once). */
      windowMs?: number;
      onFlight?: (r: FlightReport) => void;
    },
  ) {}

  /** Resolves once this chunk's events are committed in PostgreSQL (with whatever flew with it). */
  submit(chunk: ChunkEvents): Promise<FlightReport> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ chunk, resolve, reject });
      this.launchOrWait();
    });
  }

  /** An idle coalescer opens its window on the first chunk; a full batch or a busy one goes on as before. */
  private launchOrWait(): void {
    const windowMs = this.opts.windowMs ?? 0;
    if (windowMs <= 0 || this.inFlight > 0 || this.fullBatchWaiting()) {
      this.closeWindow();
      this.launch();
      return;
    }
    this.window ??= setTimeout(() => {
      this.window = undefined;
      this.launch();
    }, windowMs);
  }

  private closeWindow(): void {
    if (this.window === undefined) return;
    clearTimeout(this.window);
    this.window = undefined;
  }

  /** As many events, or as many bytes, as one flight takes. */
  private fullBatchWaiting(): boolean {
    let events = 0;
    let bytes = 0;
    for (const w of this.waiting) {
      events += w.chunk.eventIds.length;
      bytes += w.chunk.bytes;
    }
    return events >= this.opts.maxEvents || bytes >= (this.opts.maxBytes ?? Infinity);
  }

  private launch(): void {
    // Another flight beside a running one only when a full batch is waiting.
    const maxBytes = this.opts.maxBytes ?? Infinity;
    while (this.waiting.length > 0 && (this.inFlight === 0 || (this.inFlight < this.opts.maxInFlight && this.fullBatchWaiting()))) {
      const flight: Waiting[] = [];
      let events = 0;
      let bytes = 0;
      while (this.waiting.length > 0 && (flight.length === 0 || (events + this.waiting[0]!.chunk.eventIds.length <= this.opts.maxEvents && bytes + this.waiting[0]!.chunk.bytes <= maxBytes))) {
        const next = this.waiting.shift()!;
        flight.push(next);
        events += next.chunk.eventIds.length;
        bytes += next.chunk.bytes;
      }
      this.inFlight += 1;
      void this.fly(flight).finally(() => {
        this.inFlight -= 1;
        this.launch();
      });
    }
  }

  private async fly(flight: Waiting[]): Promise<void> {
    const batch: EventBatch = { consumer: this.opts.consumer, topics: [], eventIds: [], eventTypes: [], topicIndex: [], partitions: [], offsets: [], data: [], payloadHashes: [] };
    for (const { chunk } of flight) {
      let t = batch.topics.indexOf(chunk.topic);
      if (t < 0) t = batch.topics.push(chunk.topic) - 1;
      batch.eventIds.push(...chunk.eventIds);
      batch.eventTypes.push(...chunk.eventTypes);
      batch.offsets.push(...chunk.offsets);
      batch.data.push(...chunk.data);
      batch.payloadHashes.push(...chunk.payloadHashes);
      for (let i = 0; i < chunk.eventIds.length; i++) {
        batch.partitions.push(chunk.partition);
        batch.topicIndex.push(t);
      }
    }
    // Only when some event carries a trace: untraced batches keep their history as it was.
    if (flight.some(({ chunk }) => chunk.traceparents.some((t) => t !== null))) batch.traceparents = flight.flatMap(({ chunk }) => chunk.traceparents);
    const workflowId = applyWorkflowId({ group: this.opts.group, spans: flight.map((w) => w.chunk) });
    const startedAt = Date.now();
    const started = performance.now();
    try {
      // In a span of its own (linked to the events' traces): the workflow's start joins it, and
      // the flight's log line carries its trace id.
      const report = await withApplyBatchSpan(batch, workflowId, async () => {
        const { result, eagerlyStarted } = await this.run(workflowId, batch);
        const done: FlightReport = {
          ...result,
          workflowId,
          events: batch.eventIds.length,
          chunks: flight.length,
          partitions: [...new Set(flight.map((w) => `${w.chunk.topic}/${w.chunk.partition}`))].sort(),
          startedAt,
          workflowMs: Math.round(performance.now() - started),
          eagerlyStarted,
          spans: flight.map(({ chunk: c }) => ({ topic: c.topic, partition: c.partition, firstOffset: c.firstOffset, lastOffset: c.lastOffset, receivedAt: c.receivedAt })),
        };
        this.opts.onFlight?.(done);
        return done;
      }, this.opts.group);
      for (const w of flight) w.resolve(report);
    } catch (err) {
      for (const w of flight) w.reject(err);
    }
  }
}
