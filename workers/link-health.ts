import { Client, type ClientConfig } from 'pg';
import type { Kafka } from 'kafkajs';
import { NativeConnection } from '@temporalio/worker';
import { temporalConnectionOptions } from '../src/temporal/connection-options';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../src/config/env';
import { keptConnectionProbe } from './kept-connection-probe';
import { adminConnection } from './kafka-admin-connection';

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
  /** After every round (and its down or up): the links that failed it, none when all answered. */
  round?(failing: string[]): void;
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
      events.round?.(results.filter(([, error]) => error !== undefined).map(([link]) => link));
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
 * PostgreSQL: `SELECT 1` on the probe's own connection (kept while it answers:
 * keptConnectionProbe), not a pooled one, so it is never stuck behind the pool's busy connections.
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
  return keptConnectionProbe<Client>({
    open: async () => {
      const client = new Client(options);
      client.on('error', () => undefined);
      try {
        await client.connect();
      } catch (err) {
        destroy(client);
        throw err;
      }
      return client;
    },
    check: (client) => client.query('SELECT 1'),
    discard: destroy,
    release: (client) => client.end(),
  });
}

/**
 * Kafka: the topic's metadata through the probe's own admin client (kept while it answers:
 * keptConnectionProbe), with the worker's own client settings (and routes). A long-lived client
 * would keep the connections a heal left dead and wait on them until its silence check drops
 * them (25 s); a failed one is let go without waiting (its disconnect would wait on the dead link).
 */
export function kafkaProbe(kafka: Kafka, topic: string): LinkProbe {
  return keptConnectionProbe(adminConnection(kafka, (admin) => admin.fetchTopicMetadata({ topics: [topic] })));
}

/**
 * Temporal: GetSystemInfo on the connection the worker is using (`current()`; nothing to check
 * while it has none), within the timeout. The Temporal probe above proves a new connection works;
 * this one that the worker's own still does, which a heal that left old connections dead breaks.
 */
export function connectionInUseProbe(current: () => NativeConnection | undefined, timeoutMs: number): LinkProbe {
  return async () => {
    const connection = current();
    if (connection) await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
  };
}

/**
 * Temporal: GetSystemInfo on the probe's own connection (kept while it answers:
 * keptConnectionProbe), so a heal that leaves the worker's own HTTP/2 connection dead still counts
 * as healed, and the SDK's own keepalive (up to 45 s to drop a silent connection, longer than the
 * takeover bound) is never waited for: the call has its deadline.
 */
export function temporalProbe(config: Config, timeoutMs: number): LinkProbe {
  return keptConnectionProbe<NativeConnection>({
    open: () => NativeConnection.connect(temporalConnectionOptions(config, { connectTimeout: timeoutMs })),
    check: (connection) => connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({})),
    discard: (connection) => connection.close(),
    release: (connection) => connection.close(),
  });
}
