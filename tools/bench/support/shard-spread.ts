import type { Client } from '@temporalio/client';
import { statusQuery } from '../../../workflows/relay/contract';
import type { TestDatabase } from '../../../test/kit/database';
import type { RelayWorkerProcess } from '../../../test/kit/relay-worker-process';
import { insertBacklog } from './outbox-backlog';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function shardStatuses(client: Client, ids: string[]) {
  return Promise.all(ids.map((id) => client.workflow.getHandle(id).query(statusQuery)));
}

/** The pid of the worker process each shard's last batch ran on (from its identity, `…-<pid>-<hex>`), in the order of `ids`. */
export async function workerPidByShard(client: Client, ids: string[]): Promise<number[]> {
  return (await shardStatuses(client, ids)).map((s) => Number(/-(\d+)-[0-9a-f]+$/.exec(s.worker ?? '')?.[1]));
}

/**
 * Waits until the shards' own status (`worker`, the identity of the worker whose session ran the
 * last batch) names every live worker process and no other, with none holding more than
 * ⌈S/N⌉ + 1 shards; returns how long that took and the shards per worker. A trickle of 2,000
 * events per probe keeps every shard relaying, so each one's placement is put to use.
 */
export async function waitSpread(db: TestDatabase, client: Client, ids: string[], live: RelayWorkerProcess[], timeoutMs = 120_000) {
  const started = Date.now();
  const pids = live.map((w) => w.child.pid!);
  for (;;) {
    await insertBacklog(db, 2_000);
    const pidByShard = await workerPidByShard(client, ids);
    const byPid = new Map<number, number>();
    for (const pid of pidByShard) byPid.set(pid, (byPid.get(pid) ?? 0) + 1);
    const ok = [...byPid.keys()].every((p) => pids.includes(p)) && pids.every((p) => byPid.has(p)) && Math.max(...byPid.values()) <= Math.ceil(ids.length / live.length) + 1;
    if (ok) return { seconds: +((Date.now() - started) / 1000).toFixed(1), shardsPerWorker: [...byPid.values()].sort((a, b) => b - a), shardsByPid: Object.fromEntries(byPid), pidByShard };
    if (Date.now() - started > timeoutMs) throw new Error(`shards not spread over ${live.length} workers in ${timeoutMs / 1000} s: ${JSON.stringify([...byPid])}`);
    await sleep(1000);
  }
}
