import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../../src/db/executor';
import { heartbeatRelayWorker } from '../../src/outbox/queries/relay-worker-heartbeat';
import { liveRelayWorkers } from '../../src/outbox/queries/live-relay-workers';
import { removeRelayWorker } from '../../src/outbox/queries/remove-relay-worker';
import { placeShard, type LiveRelayWorker } from '../../src/outbox/relay-placement';

/**
 * How often a relay worker renews its row, and how long the row lives without renewal. A killed
 * worker stops counting as live at most TTL after its last heartbeat; three beats per TTL ride
 * out a slow database moment without the worker's shards moving away and back.
 */
export const RELAY_WORKER_HEARTBEAT_MS = 5_000;
export const RELAY_WORKER_TTL_MS = 15_000;

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

  constructor(
    private readonly db: SqlExecutor,
    readonly relayQueue: string,
    workerId = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
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

  /** True while the shard is placed on this worker (minus workers the shard is avoiding) and it is not leaving. */
  owns(shardIndex: number, shardCount: number, avoid: readonly string[] = []): boolean {
    if (this.leaving) return false;
    const live = this.liveWorkers().filter((w) => w.workerId === this.workerId || !avoid.includes(w.workerId));
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
    const live = await heartbeatRelayWorker(this.db, { relayQueue: this.relayQueue, workerId: this.workerId, taskQueue: this.taskQueue, ttlMs: RELAY_WORKER_TTL_MS });
    this.lastBeatAt = performance.now();
    this.live = live;
    this.notify();
  }

  private notify() {
    for (const listener of [...this.listeners]) listener();
  }
}
