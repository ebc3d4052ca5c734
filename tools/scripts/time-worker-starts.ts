import '../local-stack/apply-stack-env';
import os from 'node:os';
import { createTestDatabase } from '../../test/kit/database';
import { RelayProcess } from '../../test/kit/relay-harness';
import { consumerEnv, spawnConsumer, waitUntilRunning } from '../../test/kit/consumer-harness';
import { uniqueName } from '../../test/kit/ids';

// How long the suite's worker processes take to log "running", from the compiled build
// (test/kit/compiled-build.ts) and from source through tsx, alternating so both see the same load:
//   npx tsx tools/cli.ts stack run -- npx tsx tools/scripts/time-worker-starts.ts [rounds]
// Figures: docs/measurements/ci-timings.md.

async function timeStarts(databaseUrl: string): Promise<{ relayMs: number; consumerMs: number }> {
  let started = Date.now();
  const relay = new RelayProcess({ DATABASE_URL: databaseUrl, RELAY_TASK_QUEUE: uniqueName('start-relay') });
  await relay.waitUntilRunning();
  const relayMs = Date.now() - started;
  await relay.stop();
  started = Date.now();
  const consumer = spawnConsumer(consumerEnv({ databaseUrl, topic: uniqueName('start-topic'), group: uniqueName('start-group'), taskQueue: uniqueName('start-consumer') }));
  await waitUntilRunning(consumer);
  const consumerMs = Date.now() - started;
  await consumer.stop();
  return { relayMs, consumerMs };
}

async function main() {
  const rounds = Number(process.argv[2] ?? 6);
  const db = await createTestDatabase();
  try {
    for (let round = 0; round < rounds; round++) {
      for (const mode of round % 2 === 0 ? ['source', 'compiled'] : ['compiled', 'source']) {
        if (mode === 'source') process.env.OUTBOX_TEST_FROM_SOURCE = '1';
        else delete process.env.OUTBOX_TEST_FROM_SOURCE;
        const { relayMs, consumerMs } = await timeStarts(db.url);
        console.log(`${mode}\trelay ${relayMs} ms\tconsumer ${consumerMs} ms\tload ${os.loadavg()[0]!.toFixed(1)}`);
      }
    }
  } finally {
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
