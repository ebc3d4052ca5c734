import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { RETENTION_WORKFLOW, type RetentionReport, type RetentionWorkflow } from '../../workflows/retention/contract';
import { seedScene } from '../kit/seed-scene-rows';
import { loadConfig, PROJECT_ROOT } from '../../src/config/env';
import { databaseTimeAgo } from '../../src/retention/database-clock';
import { planOutboxWalk } from '../../src/retention/plan-outbox-walk';
import { sweepPublishedOutbox, type SweepBatch } from '../../src/retention/sweep-published-outbox';
import { DELETE_PUBLISHED_RANGE_SQL, type DeletePublishedRangeInput } from '../../src/retention/queries/delete-published-range';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testTemporalClient } from '../kit/temporal';
import { runRetentionOnce } from '../kit/retention-run';
import { nodeScript } from '../kit/compiled-build';

const DAY = 86_400_000;
const SHAPE = { rows: 200_000, perDay: 50_000, pending: 50, parked: 20 };

/** Every row retention must never touch, by id: pending (also old, re-queued ones) and parked. */
async function untouchable(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM temporal_outbox.outbox_events WHERE published_at IS NULL ORDER BY id`);
  return rows.map((r) => r.id);
}

/**
 * The buffers (shared hits and reads) one retention batch touches, and the rows it deletes: the
 * batch's own statement under EXPLAIN ANALYZE, rolled back so the rows stay for the sweep.
 */
async function batchCost(db: TestDatabase, range: DeletePublishedRangeInput): Promise<{ buffers: number; rows: number }> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${DELETE_PUBLISHED_RANGE_SQL}`, [range.fromId, range.toId, range.cutoff]);
    const plan = rows[0]['QUERY PLAN'][0].Plan;
    const scan = plan.Plans[0];
    return { buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'], rows: scan['Actual Rows'] };
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

async function seed(db: TestDatabase) {
  await seedScene(db.pool, SHAPE);
  // An operator re-queued a few old rows (published_at back to NULL): pending again, and old.
  await db.pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = NULL WHERE id IN (7, 70001, 140001)`);
  await db.pool.query('VACUUM ANALYZE temporal_outbox.outbox_events');
}

describe('retention sweep (200,000-row outbox)', function () {
  this.timeout(180_000);
  const config = loadConfig();

  describe('run by the retention workflow on a real Temporal server', () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase();
      await seed(db);
    });
    after(async () => db?.drop());

    it('deletes exactly the published rows older than the window and reports it', async () => {
      const keep = await untouchable(db);
      assert.equal(keep.length, SHAPE.pending + SHAPE.parked + 3);
      await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id, processed_at) SELECT 'payments-credit', 'old-' || g, now() - interval '20 days' FROM generate_series(1, 500) g`);
      await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id, processed_at) SELECT 'payments-credit', 'new-' || g, now() - interval '1 day' FROM generate_series(1, 300) g`);
      const countRows = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events`)).rows[0].n as number;
      const before = await countRows();

      const report = await runRetentionOnce(config, db.pool, { windowMs: DAY, batchSize: 5000, timeBudgetMs: 120_000, inboxHorizonMs: 15 * DAY }, 'retention-run');

      assert.deepEqual(await untouchable(db), keep, 'every pending and parked row is still there');
      const { rows: left } = await db.pool.query(`SELECT
          count(*) FILTER (WHERE published_at < $1::timestamptz)::int AS old_published,
          count(*) FILTER (WHERE published_at IS NOT NULL)::int AS published,
          (SELECT count(*)::int FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE 'old-%') AS old_inbox,
          (SELECT count(*)::int FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE 'new-%') AS new_inbox
        FROM temporal_outbox.outbox_events`, [report.outbox.cutoff]);
      assert.equal(left[0].old_published, 0, 'no published row older than the window remains');
      assert.ok(left[0].published >= SHAPE.perDay - SHAPE.pending - 200, `the last day's published rows stay (${left[0].published})`);
      assert.equal(left[0].old_inbox, 0);
      assert.equal(left[0].new_inbox, 300, 'inbox ids inside the horizon stay');

      const deleted = before - (await countRows());
      assert.ok(deleted > 149_000, `${deleted} rows deleted`);
      assert.equal(report.outbox.deleted, deleted, 'the report counts exactly the rows that went');
      assert.equal(report.inbox.deleted, 500);
      assert.equal(report.rowsDeleted, deleted + 500);
      assert.equal(report.stoppedBy, 'done');
      assert.ok(report.outbox.batches >= Math.floor(deleted / 5000));
      assert.ok(report.sizeBefore.outboxBytes > 0 && report.sizeAfter.outboxBytes > 0);
      assert.ok(report.durationMs > 0);
    });
  });

  describe('the batch loop itself', () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase();
      await seed(db);
    });
    after(async () => db?.drop());

    it('costs as much at the end of the walk as at the start (key ranges, not ORDER BY ... LIMIT)', async () => {
      // Production conditions that make a naive `WHERE id IN (SELECT id ... ORDER BY id LIMIT n)`
      // sweep slow down batch over batch: no vacuum behind it, and another session holding a
      // snapshot (the relay, a report, a replica's feedback), so the dead entries in front of the
      // next batch cannot even be marked dead in the index and each one costs a heap visit.
      // The cost is counted in buffers, not milliseconds: a count does not depend on how busy the
      // machine is (the suite runs two lanes side by side), and a naive sweep's count grows with
      // every dead entry it wades through. Measured: key ranges 533 buffers at the start and 536
      // near the end; the naive sweep swapped in, 2,534 and 6,994.
      await db.pool.query(`ALTER TABLE temporal_outbox.outbox_events SET (autovacuum_enabled = false)`);
      const snapshot = await db.pool.connect();
      try {
        await snapshot.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await snapshot.query('SELECT count(*) FROM accounts');
        const cutoff = await databaseTimeAgo(db.pool, DAY);
        const walk = await planOutboxWalk(db.pool, cutoff);
        const batchSize = 500;
        const atStart = await batchCost(db, { fromId: walk.fromId!, toId: walk.fromId! + batchSize, cutoff });

        // The real sweep over 90% of the walk, then the next batch's cost with everything it
        // deleted still in the table as dead rows.
        const stopAt = walk.fromId! + Math.floor(0.9 * (walk.untilId! - walk.fromId!));
        const batches: SweepBatch[] = [];
        const result = await sweepPublishedOutbox(db.pool, {
          cutoff,
          fromId: walk.fromId!,
          untilId: walk.untilId!,
          batchSize,
          deadline: Date.now() + 120_000,
          onBatch: (progress, batch) => {
            batches.push(batch);
            return progress.nextId >= stopAt;
          },
        });
        assert.equal(result.stoppedBy, 'cancelled');
        assert.ok(result.deleted > 100_000, `${result.deleted} rows deleted before the last tenth`);
        batches.slice(1).forEach((b, i) => assert.ok(b.fromId >= batches[i]!.toId, `batch ${i + 1} starts at ${b.fromId}, after the one before it (${batches[i]!.toId})`));
        const nearEnd = await batchCost(db, { fromId: result.nextId, toId: result.nextId + batchSize, cutoff });

        assert.ok(atStart.rows >= 450 && nearEnd.rows >= 450, `full batches measured (${atStart.rows}, ${nearEnd.rows} rows)`);
        assert.ok(
          nearEnd.buffers <= 1.5 * atStart.buffers,
          `a batch near the end touches ${nearEnd.buffers} buffers, the first one ${atStart.buffers}: the sweep wades through what it deleted`,
        );
      } finally {
        await snapshot.query('ROLLBACK').catch(() => undefined);
        snapshot.release();
      }
    });

    it('stops at its time budget and reports where the next run resumes', async () => {
      const cutoff = new Date();
      const result = await sweepPublishedOutbox(db.pool, { cutoff, fromId: 1, untilId: 10_000_000, batchSize: 10, deadline: Date.now() - 1 });
      assert.deepEqual(result, { nextId: 1, deleted: 0, batches: 0, complete: false, stoppedBy: 'time-budget' });
    });
  });

  describe('a worker killed mid-run', () => {
    let db: TestDatabase;
    const workers: ChildProcess[] = [];
    before(async () => {
      db = await createTestDatabase();
      await seed(db);
    });
    after(async () => {
      for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
      await db?.drop();
    });

    function startWorker(taskQueue: string): ChildProcess {
      const child = spawn(process.execPath, nodeScript('workers/retention.worker.ts'), {
        cwd: PROJECT_ROOT,
        env: { ...process.env, DATABASE_URL: db.url, RETENTION_TASK_QUEUE: taskQueue, LOG_LEVEL: 'warn' },
        stdio: 'ignore',
      });
      workers.push(child);
      return child;
    }

    it('resumes from the last heartbeat on another worker, and still deletes only what may go', async () => {
      const keep = await untouchable(db);
      const published = (await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL`)).rows[0].n as number;
      const taskQueue = uniqueName('retention-crash');
      const { client, connection } = await testTemporalClient();
      try {
        const first = startWorker(taskQueue);
        const handle = await client.workflow.start<RetentionWorkflow>(RETENTION_WORKFLOW, {
          taskQueue,
          workflowId: uniqueName('retention-crash'),
          // Small batches with a rest make the sweep last ≥ 30 s, long enough to be killed mid-way.
          args: [{ windowMs: DAY, batchSize: 50, batchPauseMs: 10, timeBudgetMs: 170_000, inboxHorizonMs: 15 * DAY }],
        });
        type Heartbeat = { nextId: number; deleted: number };
        const lastHeartbeat = async (): Promise<Heartbeat | undefined> => {
          const d = await handle.describe();
          const pending = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'sweepOutbox');
          const payload = pending?.heartbeatDetails?.payloads?.[0]?.data;
          return payload ? (JSON.parse(Buffer.from(payload).toString()) as Heartbeat) : undefined;
        };
        const waitForHeartbeat = async (newerThan: Heartbeat | undefined): Promise<Heartbeat | undefined> => {
          for (let i = 0; i < 600; i++) {
            const seen = await lastHeartbeat();
            if (seen && (!newerThan || seen.deleted > newerThan.deleted)) return seen;
            await new Promise((r) => setTimeout(r, 100));
          }
          return undefined;
        };
        const firstHeartbeat = await waitForHeartbeat(undefined);
        assert.ok(firstHeartbeat, 'the sweep heartbeated its progress');
        // The SDK sends the first heartbeat at once and then at most one per 4 s (0.8 × the 5 s
        // heartbeat timeout). Kill once a second one has reached the server, so the retry has
        // progress to resume from that the first attempt did not start with; waiting for it, not
        // for a fixed time, keeps this true on a machine busy with the suite's other lane.
        const heartbeat = await waitForHeartbeat(firstHeartbeat);
        assert.ok(heartbeat, `a second heartbeat after ${JSON.stringify(firstHeartbeat)}`);
        first.kill('SIGKILL');
        // The dead worker's open batch rolls back when its backend sees the socket close; wait
        // for that, then note which old rows are still there for the resumed attempt.
        for (let i = 0; i < 100; i++) {
          const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'outbox-retention'`);
          if (rows[0].n === 0) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        await db.pool.query(`CREATE TABLE left_at_kill AS SELECT id, published_at FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL`);
        const { rows: mid } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at < now() - interval '1 day'`);
        assert.ok(mid[0].n > 1000, `killed before the sweep finished (${mid[0].n} old rows left)`);

        startWorker(taskQueue);
        const report = (await handle.result()) as RetentionReport;
        assert.ok(report.outbox.attempts >= 2, `attempt ${report.outbox.attempts}`);
        assert.ok(report.outbox.resumedFromId !== undefined && report.outbox.resumedFromId >= heartbeat.nextId, `resumed from ${report.outbox.resumedFromId}`);
        const { rows: left } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at < $1::timestamptz`, [report.outbox.cutoff]);
        assert.equal(left[0].n, 0, 'the resumed run finished the job');
        assert.deepEqual(await untouchable(db), keep, 'pending and parked rows survived the crash and the retry');

        // The counts: what the resumed-from heartbeat carried plus what the retry deleted. Only the
        // rows deleted between that heartbeat reaching the server and the kill go uncounted.
        const resumedWith = report.outbox.resumedWith;
        assert.ok(resumedWith && resumedWith.deleted >= heartbeat.deleted, `resumed with ${JSON.stringify(resumedWith)}, at least the heartbeat seen before the kill ${JSON.stringify(heartbeat)}`);
        const { rows: counts } = await db.pool.query(
          `SELECT (SELECT count(*)::int FROM left_at_kill WHERE published_at < $1::timestamptz) AS after_kill,
                  (SELECT count(*)::int FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL) AS published_now`,
          [report.outbox.cutoff],
        );
        assert.equal(report.outbox.deleted, resumedWith.deleted + counts[0].after_kill, 'the report adds the heartbeat\'s count to the retry\'s');
        const actuallyDeleted = published - counts[0].published_now;
        const uncounted = actuallyDeleted - report.outbox.deleted;
        assert.ok(uncounted >= 0, `never overcounted (${uncounted})`);
        assert.ok(uncounted < actuallyDeleted / 2, `uncounted ${uncounted} of ${actuallyDeleted}: at most one heartbeat interval's worth`);
      } finally {
        await connection.close();
      }
    });
  });
});
