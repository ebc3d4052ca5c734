import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/env';
import { assertNoPreviousDefaultInbox, PreviousDefaultsError, PREVIOUS_DEFAULTS } from '../../src/inbox/guard-previous-defaults';
import { defineHandler } from '../../src/inbox/handler';
import { runConsumerWorker } from '../../workers/consumer.worker';
import { createTestDatabase, type TestDatabase } from '../kit/database';

// A deployment that relied on release 0.1's default inbox name (the example's) and upgraded
// without naming it: its consumer must not start afresh under the new default, which would apply
// again every event its old inbox remembers.
describe('consumer: refuses to start under the new default inbox when the old default holds the applied events', () => {
  let db: TestDatabase;
  // The library's own defaults: only the database is named (and no metrics endpoint).
  const config = () => loadConfig({ DATABASE_URL: db.url, KAFKA_BROKERS: process.env.KAFKA_BROKERS, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS, METRICS_PORT_BASE: '0', LOG_LEVEL: 'warn' });
  const applied = (consumer: string, eventId: string) => db.pool.query('INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ($1, $2)', [consumer, eventId]);
  const handler = defineHandler<{ n: number }>({ eventType: 'thing_done', validate: (p) => ({ ok: true, data: { n: Number(p.n) } }), apply: async () => undefined });

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => db?.drop());

  it('refuses, naming the variables that keep the old names, before it joins a group', async () => {
    await applied(PREVIOUS_DEFAULTS.inboxName, 'evt-1');
    await assert.rejects(
      runConsumerWorker(config(), { handlers: [handler] }),
      (err: unknown) => err instanceof PreviousDefaultsError && /INBOX_CONSUMER=payments-credit CONSUMER_GROUP=payments-credit KAFKA_TOPIC=payments\.events/.test(err.message) && /upgrading\.md/.test(err.message),
    );
  });

  it('lets a new deployment, one that named its inbox, and one already running under the new default start', async () => {
    await assertNoPreviousDefaultInbox(db.pool, config());
    await applied(PREVIOUS_DEFAULTS.inboxName, 'evt-1');
    await assertNoPreviousDefaultInbox(db.pool, loadConfig({ DATABASE_URL: db.url, INBOX_CONSUMER: PREVIOUS_DEFAULTS.inboxName }));
    await assertNoPreviousDefaultInbox(db.pool, loadConfig({ DATABASE_URL: db.url, INBOX_CONSUMER: 'billing' }));
    await applied('outbox-consumer', 'evt-2');
    await assertNoPreviousDefaultInbox(db.pool, config());
  });
});
