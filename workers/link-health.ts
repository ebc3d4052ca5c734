import { Client, type ClientConfig } from 'pg';
import type { Admin, Kafka } from 'kafkajs';
import { NativeConnection } from '@temporalio/worker';
import { temporalConnectionOptions } from '../src/temporal/connection-options';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../src/config/env';

/**
 * One dependency's probe: resolves when the link works, rejects (or outlasts the timeout) when not.
 * `close`: lets go of what the probe keeps between rounds (called once the watch ends).
 */
export type LinkProbe = (() => Promise<unknown>) & { close?(): Promise<void> };

export interface LinkHealthEvents {
  /**
   * `link` failed `failures` probes in a row: the worker steps aside, or says it did not (false:
   * asked again after the next failed round).
   */
  down(link: string, reason: string): boolean | Promise<boolean>;
  /** Every link answers again: the worker comes back. */
  up(): void | Promise<void>;
}

/**
 * A worker's health check of its links (docs/guarantees.md#stepping-aside): every `intervalMs`
 * each probe runs, bounded by `timeoutMs`; a link is reported down once it has failed `failures`
 * probes in a row and has been failing for `failingForMs` (from the start of the first failed
 * probe of the run), so one late probe, or two quick ones on a busy machine, never move work; one
 * full round of answers reports every link up again. The events are awaited, so a step-aside
 * finishes before the next probe round, and never overlap.
 */
export function watchLinks(
  probes: Record<string, LinkProbe>,
  settings: Config['links']['health'],
  events: LinkHealthEvents,
  signal: AbortSignal,
): Promise<void> {
  // Per link: failed probes in a row, and when the first of them started.
  const failed = new Map<string, { count: number; since: number }>();
  let down = false;
  const watching = (async () => {
    while (!signal.aborted) {
      await sleep(settings.intervalMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      const roundStart = Date.now();
      const results = await Promise.all(
        Object.entries(probes).map(async ([link, probe]) => [link, await bounded(probe, settings.timeoutMs)] as const),
      );
      for (const [link, error] of results) {
        if (error === undefined) failed.delete(link);
        else failed.set(link, { count: (failed.get(link)?.count ?? 0) + 1, since: failed.get(link)?.since ?? roundStart });
      }
      const isDown = (link: string) => {
        const run = failed.get(link);
        return run !== undefined && run.count >= settings.failures && Date.now() - run.since >= settings.failingForMs;
      };
      const failing = results.find(([link, error]) => error !== undefined && isDown(link));
      if (!down && failing) {
        down = await events.down(failing[0], failing[1]!);
      } else if (down && results.every(([, error]) => error === undefined)) {
        down = false;
        await events.up();
      }
    }
  })();
  return watching.finally(() => Promise.all(Object.values(probes).map((probe) => probe.close?.().catch(() => undefined))));
}

async function bounded(probe: LinkProbe, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const answer = probe().then(
    () => undefined,
    (err: Error) => err.message ?? String(err),
  );
  // When the timer fires, I/O that already arrived is let in first (one turn of the event loop):
  // a process that was frozen or starved runs its due timers before it reads its sockets, and an
  // answer that came in time must not lose to its own timeout.
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => setImmediate(() => resolve(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * PostgreSQL: `SELECT 1` on the probe's own connection, not a pooled one, so it is never stuck
 * behind the pool's busy connections. The connection is kept between rounds while it answers and
 * dropped at the first failure, so the next round (and every round while the link is down) tries
 * a new one: a heal that left the old connections dead counts as healed as soon as a new one
 * works, and a dead link fails the same rounds, within the same bounds, as with a new connection
 * each time. Keeping it matters: a new connection every round (a backend started, SCRAM, torn
 * down) cost the relay its wake-up latency at a trickle (docs/measurements/relay-log.md).
 */
export function postgresProbe(database: string | ClientConfig, timeoutMs: number): LinkProbe {
  const options: ClientConfig = {
    ...(typeof database === 'string' ? { connectionString: database } : database),
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    application_name: 'outbox-health-check',
  };
  // A client stuck on a dead link would wait for its goodbye: its socket is dropped instead.
  const destroy = (client: Client) => (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  let kept: Client | undefined;
  let closed = false;
  const probe: LinkProbe = async () => {
    let client = kept;
    kept = undefined;
    try {
      if (!client) {
        client = new Client(options);
        client.on('error', () => undefined);
        await client.connect();
      }
      await client.query('SELECT 1');
    } catch (err) {
      if (client) destroy(client);
      throw err;
    }
    // A round that answered after its timeout finds a newer connection kept: it closes its own.
    if (closed || kept) await client.end().catch(() => undefined);
    else kept = client;
  };
  probe.close = async () => {
    closed = true;
    const client = kept;
    kept = undefined;
    await client?.end().catch(() => undefined);
  };
  return probe;
}

/**
 * Kafka: the topic's metadata through the probe's own admin client, with the worker's own client
 * settings (and routes). Kept between rounds while it answers and let go at the first failure,
 * as for PostgreSQL: while the link is down every round connects a new one, so a heal is seen at
 * the next round instead of after the old client's silence check drops its dead connections
 * (25 s). A client whose probe failed is let go without waiting (its disconnect would wait on the
 * dead link).
 */
export function kafkaProbe(kafka: Kafka, topic: string): LinkProbe {
  let kept: Admin | undefined;
  let closed = false;
  const probe: LinkProbe = async () => {
    let admin = kept;
    kept = undefined;
    try {
      if (!admin) {
        admin = kafka.admin({ retry: { retries: 0 } });
        await admin.connect();
      }
      await admin.fetchTopicMetadata({ topics: [topic] });
    } catch (err) {
      if (admin) void admin.disconnect().catch(() => undefined);
      throw err;
    }
    if (closed || kept) await admin.disconnect().catch(() => undefined);
    else kept = admin;
  };
  probe.close = async () => {
    closed = true;
    const admin = kept;
    kept = undefined;
    await admin?.disconnect().catch(() => undefined);
  };
  return probe;
}

/**
 * Temporal: GetSystemInfo on the probe's own connection, kept between rounds while it answers and
 * replaced after any failure, as for PostgreSQL: while the link is down every round opens a new
 * one, so a heal that leaves the worker's own HTTP/2 connection dead still counts as healed, and
 * the SDK's own keepalive (up to 45 s to drop a silent connection, longer than the takeover
 * bound) is never waited for: the call has its deadline.
 */
export function temporalProbe(config: Config, timeoutMs: number): LinkProbe {
  let kept: NativeConnection | undefined;
  let closed = false;
  const probe: LinkProbe = async () => {
    let connection = kept;
    kept = undefined;
    try {
      connection ??= await NativeConnection.connect(temporalConnectionOptions(config, { connectTimeout: timeoutMs }));
      const open = connection;
      await open.withDeadline(Date.now() + timeoutMs, () => open.workflowService.getSystemInfo({}));
    } catch (err) {
      await connection?.close().catch(() => undefined);
      throw err;
    }
    if (closed || kept) await connection.close().catch(() => undefined);
    else kept = connection;
  };
  probe.close = async () => {
    closed = true;
    const connection = kept;
    kept = undefined;
    await connection?.close().catch(() => undefined);
  };
  return probe;
}
