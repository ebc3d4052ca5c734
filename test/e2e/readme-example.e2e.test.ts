import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { PROJECT_ROOT } from '../../src/config/env';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// The README's TypeScript example, extracted from the README and run as written against the
// live stack, so it cannot drift from the API: it migrates an empty database, runs the relay
// and consumer workers, starts the relay and enqueues an order; the handler's invoice must
// appear, and the script must stop cleanly on SIGTERM. The scratch file sits in the repository so
// that tsconfig's paths resolve 'temporal-outbox' to src/ (an installed package resolves the same
// import to dist/: test/e2e/package.e2e.test.ts).

/** The one ```ts block of the README. */
export function readmeExample(readme: string): string {
  const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  assert.equal(blocks.length, 1, 'the README has exactly one TypeScript example');
  return blocks[0]!;
}

describe('the README example, run as written', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let deadLetter: { topic: string; remove(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  const shardPrefix = uniqueName('readme-relay-shard');
  const scratch = path.join(PROJECT_ROOT, 'test', `.readme-example-${process.pid}.ts`);

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    topic = await createTestTopic(2);
    deadLetter = await createTestTopic(1);
    temporal = await testTemporalClient();
  });
  after(async () => {
    fs.rmSync(scratch, { force: true });
    await temporal?.client.workflow.getHandle(`${shardPrefix}-0`).terminate('test finished').catch(() => undefined);
    await temporal?.connection.close();
    await topic?.remove();
    await deadLetter?.remove();
    await db?.drop();
  });

  it('migrates, relays and applies the order through the handler, then stops on SIGTERM', async () => {
    const code = readmeExample(fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8'));
    assert.match(code, /from 'temporal-outbox'/, 'the example imports the package by its name');
    fs.writeFileSync(scratch, code);
    // The service's own tables, which the example writes to (the library creates only its own).
    await db.pool.query('CREATE TABLE orders (order_id text PRIMARY KEY, total integer NOT NULL)');
    await db.pool.query('CREATE TABLE invoices (order_id text PRIMARY KEY, total integer NOT NULL)');

    const env = {
      ...process.env,
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic.topic,
      KAFKA_DEAD_LETTER_TOPIC: deadLetter.topic,
      KAFKA_PARTITIONS: '2',
      RELAY_SHARDS: '1',
      RELAY_TASK_QUEUE: uniqueName('readme-relay'),
      CONSUMER_TASK_QUEUE: uniqueName('readme-consumer'),
      CONSUMER_GROUP: uniqueName('readme-group'),
      INBOX_CONSUMER: 'readme-example',
      RELAY_WORKFLOW_ID_PREFIX: shardPrefix,
      METRICS_PORT_BASE: '0',
      LOG_LEVEL: 'warn',
    };
    // Through tsx's loader, as the project's own scripts run TypeScript: tsx's CLI kills a child whose
    // report of the SIGTERM below is 60 ms late (test/unit/npm-scripts-signals.unit.test.ts), which
    // a loaded machine made it (exit status 143, 1 run in 2 at load 15).
    const child = spawn(process.execPath, ['--import', 'tsx', scratch], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    let exitCode: number | null | undefined;
    void exited.then((c) => (exitCode = c));
    try {
      await eventually(
        'the handler to write the invoice of the enqueued order',
        async () => {
          if (exitCode !== undefined) throw new Error(`the example exited early (${exitCode}):\n${output.slice(-3000)}`);
          return (await db.pool.query('SELECT 1 FROM invoices')).rowCount === 1;
        },
        180_000,
        250,
      );
      const { rows } = await db.pool.query<{ order_id: string; total: number; ordered: number }>(
        'SELECT i.order_id, i.total, o.total AS ordered FROM invoices i JOIN orders o USING (order_id)',
      );
      assert.equal(rows.length, 1, 'the invoice belongs to the order the example wrote');
      assert.equal(rows[0]!.total, 4200);
      assert.equal(rows[0]!.ordered, 4200);
      const inbox = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events WHERE consumer = 'readme-example'`);
      assert.equal(inbox.rows[0].n, 1, 'applied once, recorded in the inbox');
    } finally {
      if (exitCode === undefined) child.kill('SIGTERM');
    }
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 60_000).unref());
    const stopped = await Promise.race([exited, timeout]);
    if (stopped === 'timeout') child.kill('SIGKILL');
    assert.equal(stopped, 0, `the example stops cleanly on SIGTERM:\n${output.slice(-3000)}`);
  });
});
