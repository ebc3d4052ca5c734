import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../../src/db/executor';
import { heartbeatRelayWorker } from '../../src/outbox/queries/relay-worker-heartbeat';
import { liveRelayWorkers } from '../../src/outbox/queries/live-relay-workers';
import { removeRelayWorker } from '../../src/outbox/queries/remove-relay-worker';
import { placeShard, type LiveRelayWorker } from '../../src/outbox/relay-placement';
import { stillAvoided, type Avoidance } from '../../src/outbox/relay-avoidance';

/**
 * How often a relay worker renews its row, and how long the row lives without renewal. A killed
 * or cut-off worker stops counting as live at most TTL after its last renewal, which is the first
 * term of the takeover bound (docs/guarantees.md#gray-failures-the-matrix). Five beats per TTL:
 * the lease lapses only after four renewals in a row failed or came late, i.e. the worker's event
 * loop stalled or its database answered nothing for 8 s, which CPU starvation alone does not do
 * (a renewal is one indexed UPSERT; a starved process runs its timers late, not seconds late).
 */
export const RELAY_WORKER_HEARTBEAT_MS = 2_000;
export const RELAY_WORKER_TTL_MS = 10_000;
/**
 * How long after its last renewal a worker still vouches for its sessions (heartbeats them) and
 * places shards: two beats. A session's heartbeat timeout (6 s, workflows/relay/session-activity.ts)
 * then ends it at Temporal when the lease lapses (4 s + 6 s = the 10 s TTL) instead of 6 s after:
 * a cut-off worker's sessions and its lease end together, and a healthy worker loses a session
 * only when its renewals stall as long as it takes its lease to lapse anyway.
 */
export const RELAY_WORKER_VOUCH_MS = 2 * RELAY_WORKER_HEARTBEAT_MS;

/**
 * This process as a relay worker: its identity, its own task queue (where the sessions of the
 * shards placed on it are scheduled), its heartbeat row in outbox_relay_workers, and its view of
 * the live workers, refreshed at every heartbeat. Sessions ask it whether their shard is still
 * theirs; it tells them when the answer may have changed.
 */
export class RelayWorkerRegistry {
  readonly workerId: string;
  readonly taskQueue: string;
  private live: LiveRelayWorker[] = [];
  private lastBeatAt = Number.NEGATIVE_INFINITY;
  private timer?: NodeJS.Timeout;
  private leaving = false;
  private readonly listeners = new Set<() => void>();

  /**
   * `linksOkForMs`: how long this worker's links have answered every health check (null while one
   * fails), written with each renewal (workers/link-streak.ts); by default always healthy.
   */
  constructor(
    private readonly db: SqlExecutor,
    readonly relayQueue: string,
    workerId = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    private readonly linksOkForMs: () => number | null = () => performance.now(),
  ) {
    this.workerId = workerId;
    this.taskQueue = `${relayQueue}@${workerId}`;
  }

  /** Registers (the first heartbeat must succeed: a worker nobody can see would get no shard) and keeps beating. */
  async join(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch(() => undefined), RELAY_WORKER_HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Leaves at once: sessions running here end after their batch and their shards move on. */
  async leave(): Promise<void> {
    this.leaving = true;
    clearInterval(this.timer);
    this.notify();
    await removeRelayWorker(this.db, this.relayQueue, this.workerId).catch(() => undefined);
  }

  /** Live workers as last read; empty once this worker's own row may have expired (it cannot reach PostgreSQL). */
  liveWorkers(): LiveRelayWorker[] {
    return performance.now() - this.lastBeatAt < RELAY_WORKER_TTL_MS ? this.live : [];
  }

  /**
   * True while this worker's last renewal is younger than the TTL: its row may still be live. A
   * worker that cannot renew stops vouching for its sessions (session-lifetime.ts) no later than
   * its row expires, which is when another worker may fence them (fence-shard-holder.ts).
   */
  holdsLease(): boolean {
    return performance.now() - this.lastBeatAt < RELAY_WORKER_TTL_MS;
  }

  /** True while this worker's last renewal is recent (RELAY_WORKER_VOUCH_MS): its sessions heartbeat, it places shards. */
  vouches(): boolean {
    return performance.now() - this.lastBeatAt < RELAY_WORKER_VOUCH_MS;
  }

  /**
   * True while the shard is placed on this worker (minus workers the shard is still avoiding:
   * src/outbox/relay-avoidance.ts) and it is not leaving. A worker the shard stops avoiding (it
   * reported its links healthy again) takes the shard back at the next refresh.
   */
  owns(shardIndex: number, shardCount: number, avoidance: Avoidance = {}): boolean {
    if (this.leaving) return false;
    const avoided = stillAvoided(avoidance, this.liveWorkers());
    const live = this.liveWorkers().filter((w) => w.workerId === this.workerId || !avoided.has(w.workerId));
    return placeShard(shardIndex, shardCount, live)?.workerId === this.workerId;
  }

  /** Reads the live set now (a session placed here by a fresher read than this worker's last one). */
  async refresh(): Promise<void> {
    this.live = await liveRelayWorkers(this.db, this.relayQueue);
    this.notify();
  }

  /** Called after every refresh of the live set (and when leaving); returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async beat(): Promise<void> {
    if (this.leaving) return;
    const live = await heartbeatRelayWorker(this.db, { relayQueue: this.relayQueue, workerId: this.workerId, taskQueue: this.taskQueue, ttlMs: RELAY_WORKER_TTL_MS, linksOkForMs: this.linksOkForMs() });
    this.lastBeatAt = performance.now();
    this.live = live;
    this.notify();
  }

  private notify() {
    for (const listener of [...this.listeners]) listener();
  }
}
