import { Kafka, logLevel } from 'kafkajs';
import type { Pool } from 'pg';
import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import { readBacklogGauges } from '../outbox/queries/backlog-gauges';
import { groupLag, groupMembers, groupOldestWaitingAge } from './consumer-group-metrics';
import { measureGroupLag } from './consumer-group-lag';
import { every } from './periodic';
import { readHorizonAgeSeconds } from '../outbox/queries/read-horizon-age';
import { outboxOldestPendingAge, outboxParked, outboxPending, vacuumHorizonAge } from './relay-metrics';
import { kafkaConnectionOptions } from '../kafka/connection-options';

const BACKLOG_COUNT_CAP = 1_000_000;

/**
 * The relay worker's timers behind its gauges: the outbox backlog (one bounded query) and the
 * consumer group's lag as Kafka sees it (a consumer that is down cannot report itself, so the
 * side that publishes watches). Both every METRICS_SAMPLE_MS, independent of scrapes.
 */
export function startRelaySamplers(pool: Pool, config: Config, logger: Logger): { stop(): Promise<void> } {
  const backlog = every('outbox_backlog', config.metrics.sampleMs, logger, async () => {
    const g = await readBacklogGauges(pool, BACKLOG_COUNT_CAP);
    outboxPending.set(g.pending);
    outboxOldestPendingAge.set(g.oldestPendingAgeSeconds ?? 0);
    outboxParked.set(g.parked);
  });

  // A separate timer: one cheap read of pg_stat_activity and pg_prepared_xacts.
  const horizon = every('vacuum_horizon_age', config.metrics.sampleMs, logger, async () => {
    vacuumHorizonAge.set(await readHorizonAgeSeconds(pool));
  });

  const { topic, consumerGroup: group } = config.kafka;
  const admin = new Kafka({ clientId: `outbox-lag-watch-${process.pid}`, ...kafkaConnectionOptions(config), logLevel: logLevel.NOTHING, retry: { retries: 1 } }).admin();
  let connected: Promise<void> | undefined;
  const lag = every('consumer_group_lag', config.metrics.sampleMs, logger, async () => {
    connected ??= admin.connect().catch((err: unknown) => {
      connected = undefined;
      throw err;
    });
    await connected;
    const m = await measureGroupLag(admin, topic, group);
    groupMembers.set({ group, topic }, m.members);
    for (const p of m.partitions) {
      const labels = { group, topic, partition: String(p.partition) };
      groupLag.set(labels, p.lag);
      groupOldestWaitingAge.set(labels, (p.oldestWaitingAgeMs ?? 0) / 1000);
    }
  });

  return {
    async stop() {
      backlog.stop();
      horizon.stop();
      lag.stop();
      await admin.disconnect().catch(() => undefined);
    },
  };
}
