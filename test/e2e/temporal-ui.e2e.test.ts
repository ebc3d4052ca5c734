import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import type { Browser, Page } from 'playwright-core';
import { ensureAuditSchedule } from '../../src/audit/schedule';
import { triggerAuditRun } from '../../src/audit/trigger-run';
import { loadStackConfig, type StackConfig as Config } from '../../tools/local-stack/stack-config';
import { findEventWorkflows } from '../../src/inbox/find-event-workflows';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { ensureRetentionSchedule } from '../../src/retention/schedule';
import { startAuditWorker } from '../kit/audit-worker';
import { launchChromium, screenshotDir } from '../kit/browser';
import { consumerEnv, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import type { EventBatch } from '../../workflows/inbox/contract';

// The Temporal Web UI in a real headless Chromium while a pipeline of this test's own runs (relay
// and consumer processes, retention and audit schedules, traffic): what docs/demo.md says an
// operator sees there must be there. The UI is the stack's (LOCAL_TEMPORAL_UI_PORT): the dev
// server's built-in one, or with TEMPORAL_SERVER=cluster the cluster's own UI server, which CI
// runs this file against (CLUSTER_CORE_SUBSET). Screenshots are saved (UI_SCREENSHOT_DIR=docs/screenshots
// refreshes docs/demo.md's).
describe('the Temporal UI in a real browser, while the pipeline runs', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: RelayProcess;
  let consumer: ConsumerProcess;
  let scheduled: { close(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  let config: Config;
  let browser: Browser;
  let page: Page;
  let traffic: NodeJS.Timeout | undefined;
  let shots: string;
  const relayQueue = uniqueName('ui-relay');
  const shardIds = [uniqueName('ui-relay-shard-0'), uniqueName('ui-relay-shard-1')];
  let sent = 0;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    temporal = await testTemporalClient();
    await ensureSearchAttributes(temporal.connection, temporal.client.options.namespace);
    config = loadStackConfig({
      ...process.env,
      DATABASE_URL: db.url,
      RETENTION_TASK_QUEUE: uniqueName('ui-scheduled'),
      RETENTION_SCHEDULE_ID: uniqueName('ui-retention'),
      AUDIT_SCHEDULE_ID: uniqueName('ui-audit'),
      // Events younger than this may still be on their way through Kafka on a busy machine.
      AUDIT_SETTLE_MS: '30000',
      // The example consumer's inbox (examples/example-settings.ts) and its handler's type.
      AUDIT_CONSUMERS: 'payments-credit=payment_confirmed',
    });
    shots = screenshotDir(config.local.cacheDir);
    relay = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: relayQueue });
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('ui-group'), taskQueue: uniqueName('ui-credit') }));
    scheduled = await startAuditWorker(config);
    await Promise.all([relay.waitUntilRunning(), waitUntilRunning(consumer)]);
    for (const [i, id] of shardIds.entries()) await startShard(temporal.client, relayQueue, { shardIndex: i, shardCount: 2, batchSize: 200 }, id);
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, 20)');
    // Traffic for the whole test: 20 payments every half second.
    const enqueue = async () => {
      const from = sent + 1;
      sent += 20;
      await db.pool.query(
        `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
         SELECT 'payment_confirmed', jsonb_build_object('event_id', 'ui-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % 20, 'amount', 100 + g)
           FROM generate_series($1::int, $2::int) g`,
        [from, sent],
      );
    };
    await enqueue();
    traffic = setInterval(() => void enqueue().catch(() => undefined), 500);
    await ensureRetentionSchedule(temporal.client, config);
    await ensureAuditSchedule(temporal.client, config);
    await temporal.client.schedule.getHandle(config.retention.scheduleId).trigger();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    // The list's columns, as an operator configures them once ("Configure Columns"), kept by the UI in local storage.
    const columns = ['Status', 'Workflow ID', 'Type', 'OutboxRelayShard', 'OutboxRelayStatus', 'OutboxRelayPublished', 'OutboxRelayPending', 'Start'];
    const stored = JSON.stringify({ [config.temporal.namespace]: columns.map((label) => ({ label })) });
    await page.addInitScript({ content: `localStorage.setItem('namespace-workflow-table-columns', ${JSON.stringify(stored)});` });
  });

  after(async () => {
    if (traffic) clearInterval(traffic);
    await browser?.close();
    for (const id of [config?.retention.scheduleId, config?.audit.scheduleId]) if (id) await temporal?.client.schedule.getHandle(id).delete().catch(() => undefined);
    await terminateStartedShards();
    await relay?.kill9();
    await consumer?.stop('SIGKILL');
    await scheduled?.close();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const ui = (p: string) => `${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}${p}`;
  const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
  // Every frame's text: the UI renders current details (markdown) in a sandboxed iframe.
  const text = async () => (await Promise.all(page.frames().map((f) => f.locator('body').innerText().catch(() => '')))).join('\n');
  /**
   * Waits until the page shows `what` (the UI renders slowly on a busy machine). With `refresh`,
   * presses R every 30 s (not more often: each press restarts the query): the UI's key for reloading current details, which it fetches by a
   * query a worker must answer. On timeout keeps a screenshot and the page text under shots/.
   */
  const waitForText = async (what: RegExp, opts: { timeoutMs?: number; refresh?: boolean } = {}) => {
    let polls = 0;
    try {
      await eventually(`the page to show ${what}`, async () => {
        if (opts.refresh && ++polls % 60 === 0) await page.keyboard.press('r');
        return what.test(await text());
      }, opts.timeoutMs ?? 90_000, 500);
    } catch (err) {
      const name = `failed-${what.source.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`;
      // Failures go to the cache, never among the committed screenshots.
      const dir = path.join(config.local.cacheDir, 'ui-screenshots');
      fs.mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true }).catch(() => undefined);
      fs.writeFileSync(path.join(dir, `${name}.txt`), await text().catch(() => ''));
      throw new Error(`${(err as Error).message} at ${page.url()} (page kept as ${name}.png/.txt in ${dir})`, { cause: err });
    }
  };
  const runIdOf = async (workflowId: string) => (await temporal.client.workflow.getHandle(workflowId).describe()).runId;

  it('is the UI of the Temporal this test runs on', async () => {
    // The UI server answers for the cluster it is connected to: its cluster id (a random id each
    // Temporal creates once for its persistence) and shard count are the ones the test's own
    // client sees, so a UI left over from another stack (another dev server, or the dev server's
    // UI on the cluster's port) fails here rather than showing nothing useful later.
    const expected = await temporal.connection.workflowService.getClusterInfo({});
    const response = await page.request.get(`${config.temporal.uiUrl}/api/v1/cluster-info`);
    assert.equal(response.status(), 200, `GET /api/v1/cluster-info: ${response.status()}`);
    const shown = (await response.json()) as { clusterId?: string; historyShardCount?: number | string };
    assert.ok(expected.clusterId, 'the client sees a cluster id');
    assert.equal(shown.clusterId, expected.clusterId, `the UI's cluster is the test's (${config.temporal.server})`);
    assert.equal(Number(shown.historyShardCount), expected.historyShardCount);
  });

  it('lists the relay shards with their status and counters', async () => {
    await eventually('both shards published something', async () => {
      const d = await Promise.all(shardIds.map((id) => temporal.client.workflow.getHandle(id).describe()));
      return d.every((x) => Number(x.searchAttributes.OutboxRelayPublished?.[0] ?? 0) > 0);
    }, 120_000, 500);
    await page.goto(ui(`/workflows?query=${encodeURIComponent(`TaskQueue = '${relayQueue}'`)}`));
    const table = page.locator('table');
    for (const id of shardIds) await table.getByRole('link', { name: id }).waitFor({ timeout: 60_000 });
    const headers = await table.locator('th').allInnerTexts();
    for (const h of ['OutboxRelayShard', 'OutboxRelayStatus', 'OutboxRelayPublished', 'OutboxRelayPending']) assert.ok(headers.some((x) => x.includes(h)), `column ${h} in ${headers.join('|')}`);
    for (const [i, id] of shardIds.entries()) {
      const row = (await table.locator('tr', { hasText: id }).innerText()).replace(/\s+/g, ' ');
      assert.match(row, /running/i, `shard ${i} status: ${row}`);
      const published = Number((await temporal.client.workflow.getHandle(id).describe()).searchAttributes.OutboxRelayPublished?.[0]);
      assert.ok(published > 0);
      assert.match(row, new RegExp(`\\b${i}\\b.*\\b(running|idle)\\b.*\\b\\d+\\b`, 'i'), `shard, state and counters in the row: ${row}`);
    }
    await shot('relay-shards');
  });

  it("shows a shard's activities and current details on its page", async () => {
    await page.goto(ui(`/workflows/${shardIds[0]}/${await runIdOf(shardIds[0]!)}/history`));
    // The event history: the shard's placement (a local activity) and its relay sessions on the
    // placed worker's own task queue (docs/relay.md, "Where shards run").
    await waitForText(/relayShardSession/);
    await waitForText(/placeRelayShard/);
    await page.getByRole('tab', { name: /User Metadata/i }).click();
    await waitForText(/Outbox relay — shard 0 of 2/, { refresh: true });
    const body = await text();
    assert.match(body, /Current Details/i);
    assert.match(body, /published/);
    assert.match(body, /pending/);
    await shot('relay-shard');
  });

  it('lists the retention schedule and its runs', async () => {
    await eventually('the triggered retention run finished', async () => {
      const d = await temporal.client.schedule.getHandle(config.retention.scheduleId).describe();
      return d.info.recentActions.length > 0;
    }, 60_000, 500);
    await page.goto(ui('/schedules'));
    await waitForText(new RegExp(config.retention.scheduleId));
    await page.goto(ui(`/schedules/${config.retention.scheduleId}`));
    await waitForText(/outbox-retention-run-/);
    await waitForText(/Recent Runs?/i);
    assert.match(await text(), /retentionWorkflow/);
    await shot('retention-schedule');
  });

  it("finds the consumer's workflow for a given event id", async () => {
    const eventId = 'ui-7';
    await eventually(`${eventId} applied`, async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.inbox_processed_events WHERE event_id = $1`, [eventId])).rowCount === 1, 120_000);
    let found: Awaited<ReturnType<typeof findEventWorkflows>> = [];
    await eventually('the applyEventsWorkflow run is visible to search', async () => {
      found = await findEventWorkflows(db.pool, temporal.client, eventId);
      return found.length === 1 && found[0]!.workflows.some((w) => w.holdsEvent);
    }, 30_000, 1000);
    const { query, workflows, partition, offset } = found[0]!;
    const carrier = workflows.find((w) => w.holdsEvent)!;
    assert.match(carrier.workflowId, /^apply-/);
    for (const w of workflows) {
      const topics = (await temporal.client.workflow.getHandle(w.workflowId, w.runId).describe()).searchAttributes.OutboxKafkaTopics as string[] | undefined;
      assert.ok(topics?.includes(topic.topic), `only runs holding this test's topic are listed: ${w.workflowId} has ${JSON.stringify(topics)}`);
    }
    await page.goto(ui(`/workflows?query=${encodeURIComponent(query)}`));
    await page.locator('table').getByRole('link', { name: carrier.workflowId }).waitFor({ timeout: 60_000 });
    await shot('credit-by-event');
    await page.goto(ui(`/workflows/${encodeURIComponent(carrier.workflowId)}/${carrier.runId}/history`));
    await waitForText(/applyEventsWorkflow/);
    // The run's input (an EventBatch) holds the event where its inbox row says it sat.
    const history = await temporal.client.workflow.getHandle(carrier.workflowId, carrier.runId).fetchHistory();
    const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const batch = temporal.client.options.loadedDataConverter.payloadConverter.fromPayload(input) as EventBatch;
    const i = batch.eventIds.indexOf(eventId);
    assert.deepEqual([batch.topics[batch.topicIndex[i]!], batch.partitions[i], Number(batch.offsets[i])], [topic.topic, partition, offset], `${carrier.workflowId} carries ${eventId}`);
  });

  it('shows an audit run with its findings', async () => {
    await db.pool.query(`UPDATE accounts SET balance = balance + 1 WHERE account_id = 5`);
    const { workflowId, runId, report } = await triggerAuditRun(temporal.client, config.audit.scheduleId);
    assert.equal(report.checks.find((c) => c.name === 'balanceMismatches')?.findings.listed[0]?.detail?.accountId, '5');
    await page.goto(ui(`/workflows/${encodeURIComponent(workflowId)}/${runId}/history`));
    await waitForText(/reconciliationWorkflow/);
    await page.getByRole('tab', { name: /User Metadata/i }).click();
    await waitForText(/Outbox reconciliation: DRIFT/, { refresh: true });
    assert.match(await text(), /account 5: balance \d+ but opening balance \+ applied credits = \d+ \(difference 1\)/);
    await shot('audit-run');
  });
});
