import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { TASK_QUEUES } from '../../config/constants';
import { loadConfig, type Config } from '../../config/env';
import { createPool } from '../../db/pool';
import { listParked, redriveParked } from '../../outbox/queries/parked-rows';
import { readLayout } from '../../outbox/queries/relay-layout';
import { relayStatuses, reshardRelays, restartShards, startRelays, stopRelays, stuckShards, type RelayControlOptions } from '../../outbox/relay-control';

/** Runs `work` with a Temporal client and a small pool, closing both. */
async function withControl<T>(config: Config, batchSize: number, work: (opts: RelayControlOptions) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: config.temporal.address });
  const pool = createPool(config.database.url, { max: 2 });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    return await work({ client, db: pool, taskQueue: config.relay.taskQueue ?? TASK_QUEUES.relay, batchSize, workflowId: config.relay.workflowId });
  } finally {
    await pool.end();
    await connection.close();
  }
}

const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`expected a positive integer, got ${v}`);
  return n;
};

export function registerRelayCommands(program: Command) {
  const relay = program.command('relay').description('the outbox relay: one perpetual Temporal workflow per shard');

  relay
    .command('start')
    .description('start relay shards 0..N-1 that are not running (idempotent); a relay worker must be running to execute them')
    .option('--shards <n>', 'shard count (default: the recorded layout, else RELAY_SHARDS)', positive)
    .option('--batch-size <n>', 'rows per batch (default RELAY_BATCH_SIZE)', positive)
    .action(async (o: { shards?: number; batchSize?: number }) => {
      const config = loadConfig();
      await withControl(config, o.batchSize ?? config.relay.batchSize, async (opts) => {
        const shards = o.shards ?? (await readLayout(opts.db)) ?? config.relay.shards;
        const { started, alreadyRunning } = await startRelays(opts, shards);
        console.log(`relay shards (${shards}): started [${started.join(', ')}], already running [${alreadyRunning.join(', ')}]`);
      });
    });

  relay
    .command('stop')
    .description('ask every relay shard to finish its batch and stop; waits until they have')
    .action(async () => {
      const config = loadConfig();
      await withControl(config, config.relay.batchSize, async (opts) => {
        const shards = (await readLayout(opts.db)) ?? config.relay.shards;
        const { stopped } = await stopRelays(opts, shards);
        console.log(`stopped relay shards [${stopped.join(', ')}]`);
      });
    });

  relay
    .command('restart')
    .description('end the relay shards (healthy ones by the stop signal, stuck ones by terminating them) and start them afresh (safe: progress lives in outbox_events); the fix for a shard stuck after a code change')
    .option('--stuck-only', 'only shards whose workflow task keeps failing')
    .action(async (o: { stuckOnly?: boolean }) => {
      const config = loadConfig();
      await withControl(config, config.relay.batchSize, async (opts) => {
        const shards = (await readLayout(opts.db)) ?? config.relay.shards;
        const targets = o.stuckOnly ? (await stuckShards(opts, shards)).map((s) => s.shardIndex) : Array.from({ length: shards }, (_, i) => i);
        const started = targets.length ? await restartShards(opts, targets, shards) : [];
        console.log(targets.length ? `restarted relay shards [${started.join(', ')}]` : 'no relay shard is stuck');
      });
    });

  relay
    .command('reshard')
    .description('change the shard count: stop all relays (after their batch), record the new layout, start N new ones; idempotent')
    .requiredOption('--shards <n>', 'new shard count', positive)
    .option('--batch-size <n>', 'rows per batch (default RELAY_BATCH_SIZE)', positive)
    .action(async (o: { shards: number; batchSize?: number }) => {
      const config = loadConfig();
      await withControl(config, o.batchSize ?? config.relay.batchSize, async (opts) => {
        const r = await reshardRelays(opts, o.shards);
        console.log(r.stopped.length || r.started.length ? `resharded ${r.from ?? '(none)'} → ${o.shards}: stopped [${r.stopped.join(', ')}], started [${r.started.join(', ')}]` : `already ${o.shards} shards, all running`);
      });
    });

  relay
    .command('status')
    .description('each shard’s state and counters (the same as `temporal workflow query --name status`)')
    .action(async () => {
      const config = loadConfig();
      await withControl(config, config.relay.batchSize, async (opts) => {
        const shards = (await readLayout(opts.db)) ?? config.relay.shards;
        for (const s of await relayStatuses(opts, shards)) console.log(JSON.stringify(s));
      });
    });

  relay
    .command('parked')
    .description('list parked outbox rows (could not be published) with their reason')
    .option('--limit <n>', 'at most this many', positive, 100)
    .action(async (o: { limit: number }) => {
      const pool = createPool(loadConfig().database.url, { max: 1 });
      try {
        const rows = await listParked(pool, o.limit);
        if (rows.length === 0) console.log('no parked rows');
        for (const r of rows) console.log(`${r.id}\t${r.eventType}\tkey=${r.messageKey}\tattempts=${r.attempts}\tparked=${r.parkedAt.toISOString()}\t${r.lastError}`);
      } finally {
        await pool.end();
      }
    });

  relay
    .command('redrive')
    .description('put parked rows back in the queue with a fresh attempt budget (after fixing what was wrong)')
    .option('--id <id...>', 'outbox ids to re-drive', (v: string, acc: number[] = []) => [...acc, positive(v)])
    .option('--all', 'every parked row')
    .action(async (o: { id?: number[]; all?: boolean }) => {
      if (!o.all && !o.id?.length) throw new Error('say which rows: --id N [--id M ...] or --all');
      const pool = createPool(loadConfig().database.url, { max: 1 });
      try {
        const ids = await redriveParked(pool, o.all ? null : o.id!);
        console.log(ids.length ? `re-driven: ${ids.join(', ')}` : 'nothing to re-drive (no such parked rows)');
      } finally {
        await pool.end();
      }
    });
}
