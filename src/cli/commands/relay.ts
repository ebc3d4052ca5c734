import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config/env';
import { createPool, databaseTimeouts } from '../../db/pool';
import { listParked } from '../../outbox/queries/parked-rows';
import { readLayout } from '../../outbox/queries/relay-layout';
import { configuredRelayControl, relayStatuses, reshardRelays, restartShards, startRelays, stopRelays, stuckShards, type RelayControlOptions } from '../../outbox/relay-control';
import { connectTemporalClient, withCallDeadline } from '../../temporal/connect-client';
import { pauseShards, redriveThroughShards, resumeShards } from '../../outbox/relay-operator-control';
import { databaseUrl } from '../../config/resolve';
import { registerRelayWorkerCommand } from './relay-worker';

/** Runs `work` with a Temporal client and a small pool, closing both; its Temporal calls end by TEMPORAL_CALL_TIMEOUT_MS. */
async function withControl<T>(config: Config, batchSize: number, work: (opts: RelayControlOptions) => Promise<T>): Promise<T> {
  const { connection, client } = await connectTemporalClient(config);
  const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 2, ...databaseTimeouts(config) });
  try {
    return await withCallDeadline(connection, config, () =>
      work(configuredRelayControl(config, client, pool, { batchSize })),
    );
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
  registerRelayWorkerCommand(relay);

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
      const config = loadConfig();
      const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 1 });
      try {
        const rows = await listParked(pool, o.limit);
        if (rows.length === 0) console.log('no parked rows');
        for (const r of rows) console.log(`${r.id}\t${r.eventType}\tkey=${r.messageKey}\tattempts=${r.attempts}\tparked=${r.parkedAt.toISOString()}\t${r.lastError}`);
      } finally {
        await pool.end();
      }
    });

  relay
    .command('pause')
    .description('pause relay shards (all, or --shard N): each finishes its batch, then publishes nothing until resumed; a `pause` signal in its history')
    .option('--shard <n...>', 'only these shards', (v: string, acc: number[] = []) => [...acc, nonNegative(v)])
    .option('--reason <text>', 'why (shown in the UI and in `relay status`)', 'paused by an operator')
    .action(async (o: { shard?: number[]; reason: string }) => {
      const config = loadConfig();
      await withControl(config, config.relay.batchSize, async (opts) => {
        const results = await pauseShards(opts, await targetShards(opts, config, o.shard), o.reason);
        for (const r of results) console.log(`shard ${r.shardIndex}: ${r.state}`);
      });
    });

  relay
    .command('resume')
    .description('resume paused relay shards (all, or --shard N); they drain what was enqueued meanwhile; a `resume` signal in their history')
    .option('--shard <n...>', 'only these shards', (v: string, acc: number[] = []) => [...acc, nonNegative(v)])
    .option('--reason <text>', 'why (recorded in the signal)', 'resumed by an operator')
    .action(async (o: { shard?: number[]; reason: string }) => {
      const config = loadConfig();
      await withControl(config, config.relay.batchSize, async (opts) => {
        const results = await resumeShards(opts, await targetShards(opts, config, o.shard), o.reason);
        for (const r of results) console.log(`shard ${r.shardIndex}: ${r.state}`);
      });
    });

  relay
    .command('redrive')
    .description('put parked rows back in the queue with a fresh attempt budget (after fixing what was wrong), through each shard\'s `redrive` update: an activity in its history')
    .option('--id <id...>', 'outbox ids to re-drive', (v: string, acc: number[] = []) => [...acc, positive(v)])
    .option('--all', 'every parked row')
    .option('--reason <text>', 'why (recorded in the update)', 're-driven by an operator')
    .action(async (o: { id?: number[]; all?: boolean; reason: string }) => {
      if (!o.all && !o.id?.length) throw new Error('say which rows: --id N [--id M ...] or --all');
      const config = loadConfig();
      await withControl(config, config.relay.batchSize, async (opts) => {
        const shards = (await readLayout(opts.db)) ?? config.relay.shards;
        const { redriven } = await redriveThroughShards(opts, shards, o.all ? null : o.id!, o.reason);
        console.log(redriven.length ? `re-driven: ${redriven.join(', ')}` : 'nothing to re-drive (no such parked rows)');
      });
    });
}

const nonNegative = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`expected a shard index (0, 1, ...), got ${v}`);
  return n;
};

/** The shards named on the command line, else every shard of the recorded layout. */
async function targetShards(opts: RelayControlOptions, config: Config, named?: number[]): Promise<number[]> {
  const shards = (await readLayout(opts.db)) ?? config.relay.shards;
  const outside = (named ?? []).filter((i) => i >= shards);
  if (outside.length) throw new Error(`the outbox is laid out for ${shards} shards (0..${shards - 1}); no shard ${outside.join(', ')}`);
  return named?.length ? named : Array.from({ length: shards }, (_, i) => i);
}
