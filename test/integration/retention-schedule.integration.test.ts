import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, ScheduleOverlapPolicy } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createRetentionActivities } from '../../activities/retention';
import { RETENTION_WORKFLOW, type RetentionReport } from '../../workflows/retention/contract';
import { seedScene } from '../kit/seed-scene-rows';
import { PROJECT_ROOT } from '../../src/config/env';
import { loadStackConfig, type StackConfig as Config } from '../../tools/local-stack/stack-config';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testTemporalClient } from '../kit/temporal';

const exec = promisify(execFile);

/** The `temporal` binary the way tools/local-stack/temporal.ts finds it: TEMPORAL_CLI, the project cache, PATH. */
function temporalBinary(config: Config): string {
  if (config.temporal.cli) return config.temporal.cli;
  const cached = path.join(config.local.cacheDir, 'bin', 'temporal');
  return fs.existsSync(cached) ? cached : 'temporal';
}

/** Runs a shell command line as a user would type it, with `temporal` on PATH. */
async function shell(commandLine: string, config: Config, env: NodeJS.ProcessEnv = {}) {
  const bin = temporalBinary(config);
  const PATH = bin.includes('/') ? `${path.dirname(bin)}:${process.env.PATH}` : process.env.PATH;
  return exec('bash', ['-c', commandLine], { cwd: PROJECT_ROOT, env: { ...process.env, PATH, TEMPORAL_ADDRESS: config.temporal.address, ...env } });
}

/** Waits for the schedule's newest run to finish and returns its report. */
async function nextRunResult(client: Client, scheduleId: string, after: number): Promise<RetentionReport> {
  for (let i = 0; i < 300; i++) {
    const d = await client.schedule.getHandle(scheduleId).describe();
    const action = d.info.recentActions.find((a) => a.takenAt.getTime() >= after);
    if (action) return (await client.workflow.getHandle(action.action.workflow.workflowId, action.action.workflow.firstExecutionRunId).result()) as RetentionReport;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`schedule ${scheduleId} took no action`);
}

async function retentionWorker(config: Config, db: TestDatabase, namespace: string, taskQueue: string) {
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('../../workflows/retention/retention'),
    activities: createRetentionActivities({ pool: db.pool, config }),
  });
  return { worker, connection };
}

async function seedOldRows(db: TestDatabase) {
  await seedScene(db.pool, { rows: 20_000, perDay: 5_000, pending: 5, parked: 3 });
}

describe('retention schedule', function () {
  this.timeout(180_000);

  describe('npm run retention:schedule', () => {
    let db: TestDatabase;
    const scheduleId = uniqueName('retention-schedule');
    const taskQueue = uniqueName('retention');
    let env: NodeJS.ProcessEnv;
    let client: Client;
    let close: () => Promise<void>;
    before(async () => {
      db = await createTestDatabase();
      await seedOldRows(db);
      env = { DATABASE_URL: db.url, RETENTION_SCHEDULE_ID: scheduleId, RETENTION_TASK_QUEUE: taskQueue, RETENTION_INTERVAL: '1h', RETENTION_WINDOW_MS: '86400000' };
      const t = await testTemporalClient();
      client = t.client;
      close = () => t.connection.close();
    });
    after(async () => {
      await client?.schedule.getHandle(scheduleId).delete().catch(() => undefined);
      await close?.();
      await db?.drop();
    });

    it('creates the schedule, then updates it in place when run again', async () => {
      const config = loadStackConfig({ ...process.env, ...env });
      const first = await shell('npm run -s retention:schedule', config, env);
      assert.match(first.stdout, new RegExp(`retention schedule ${scheduleId} created: every 1h, overlap skip`));
      let d = await client.schedule.getHandle(scheduleId).describe();
      assert.equal(d.policies.overlap, ScheduleOverlapPolicy.SKIP);
      assert.equal(d.spec.intervals?.[0]?.every, 3_600_000);
      assert.equal(d.action.type === 'startWorkflow' && d.action.workflowType, RETENTION_WORKFLOW);
      assert.equal(d.action.type === 'startWorkflow' && d.action.taskQueue, taskQueue);

      const again = await shell('npm run -s retention:schedule', config, { ...env, RETENTION_INTERVAL: '30m', RETENTION_BATCH_SIZE: '777', RETENTION_BATCH_PAUSE_MS: '3' });
      assert.match(again.stdout, /updated: every 30m/);
      d = await client.schedule.getHandle(scheduleId).describe();
      assert.equal(d.spec.intervals?.length, 1);
      assert.equal(d.spec.intervals?.[0]?.every, 1_800_000);
      assert.equal(d.action.type === 'startWorkflow' && (d.action.args?.[0] as { batchSize: number }).batchSize, 777);
      assert.equal(d.action.type === 'startWorkflow' && (d.action.args?.[0] as { batchPauseMs: number }).batchPauseMs, 3, 'the pause travels in the schedule input');
    });

    it('runs when triggered with `temporal schedule trigger`, and pauses with `temporal schedule toggle`', async () => {
      const config = loadStackConfig({ ...process.env, ...env });
      const { worker, connection } = await retentionWorker(config, db, config.temporal.namespace, taskQueue);
      try {
        const before = Date.now() - 1000;
        const report = await worker.runUntil(async () => {
          await shell(`temporal schedule trigger --schedule-id ${scheduleId}`, config);
          return nextRunResult(client, scheduleId, before);
        });
        assert.ok(report.outbox.deleted > 10_000, `${report.outbox.deleted} rows deleted`);
        assert.equal(report.settings.batchSize, 777, 'the run used the schedule input');
        assert.equal(report.settings.batchPauseMs, 3);
        const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at < $1`, [report.outbox.cutoff]);
        assert.equal(rows[0].n, 0);
      } finally {
        await connection.close();
      }
      await shell(`temporal schedule toggle --schedule-id ${scheduleId} --pause --reason "test pause"`, config);
      assert.equal((await client.schedule.getHandle(scheduleId).describe()).state.paused, true);
      await shell(`temporal schedule toggle --schedule-id ${scheduleId} --unpause --reason "test resume"`, config);
      assert.equal((await client.schedule.getHandle(scheduleId).describe()).state.paused, false);
    });
  });

  describe('the documented `temporal schedule create` command, run as written', () => {
    // The command names the real schedule id and task queue, so it runs in a namespace of its
    // own (TEMPORAL_NAMESPACE, which the CLI reads) instead of the one real workers use.
    const namespace = 'outbox-retention-docs-test';
    let db: TestDatabase;
    let client: Client;
    let close: () => Promise<void>;
    let config: Config;
    before(async () => {
      config = loadStackConfig();
      db = await createTestDatabase();
      await seedOldRows(db);
      await shell(`temporal operator namespace create --namespace ${namespace}`, config).catch(() => undefined);
      await shell('temporal schedule delete --schedule-id outbox-retention', config, { TEMPORAL_NAMESPACE: namespace }).catch(() => undefined);
      const t = await testTemporalClient();
      client = new Client({ connection: t.connection, namespace });
      close = () => t.connection.close();
    });
    after(async () => {
      await shell('temporal schedule delete --schedule-id outbox-retention', config, { TEMPORAL_NAMESPACE: namespace }).catch(() => undefined);
      await close?.();
      await db?.drop();
    });

    it('creates a schedule whose triggered run deletes the old published rows', async () => {
      const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs/retention.md'), 'utf8');
      const command = /```sh\n(temporal schedule create[\s\S]*?)```/.exec(doc)?.[1];
      assert.ok(command, 'docs/retention.md has the temporal schedule create command');
      await shell(command, config, { TEMPORAL_NAMESPACE: namespace });

      const d = await client.schedule.getHandle('outbox-retention').describe();
      assert.equal(d.policies.overlap, ScheduleOverlapPolicy.SKIP);
      assert.equal(d.spec.intervals?.[0]?.every, 600_000);

      const { worker, connection } = await retentionWorker(config, db, namespace, 'outbox-retention');
      try {
        const before = Date.now() - 1000;
        const report = await worker.runUntil(async () => {
          await shell('temporal schedule trigger --schedule-id outbox-retention', config, { TEMPORAL_NAMESPACE: namespace });
          return nextRunResult(client, 'outbox-retention', before);
        });
        // parkedHorizonMs: not in the documented command, so the workflow's default (30 days).
        assert.deepEqual(report.settings, { windowMs: 86_400_000, batchSize: 10_000, batchPauseMs: 10, timeBudgetMs: 300_000, inboxHorizonMs: 1_209_600_000, parkedHorizonMs: 2_592_000_000 });
        assert.ok(report.outbox.deleted > 10_000);
        const { rows } = await db.pool.query(`SELECT count(*) FILTER (WHERE published_at IS NULL)::int AS kept, count(*) FILTER (WHERE published_at < $1)::int AS old FROM temporal_outbox.outbox_events`, [report.outbox.cutoff]);
        assert.deepEqual(rows[0], { kept: 8, old: 0 });
      } finally {
        await connection.close();
      }
    });
  });
});
