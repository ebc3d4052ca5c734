import type { StackConfig as Config } from '../local-stack/stack-config';
import { ensureKafka, KAFKA_SERVICE } from '../local-stack/kafka';
import type { CachePaths } from '../local-stack/paths';
import { ensurePostgres, PG_SERVICE } from '../local-stack/postgres';
import { runningPid, sleep } from '../local-stack/processes';
import { ensureTemporal, TEMPORAL_SERVICE } from '../local-stack/temporal';

export type CrashableService = 'postgres' | 'kafka' | 'temporal';

const DAEMON_NAME: Record<CrashableService, string> = { postgres: PG_SERVICE, kafka: KAFKA_SERVICE, temporal: TEMPORAL_SERVICE };

/**
 * A crash, not a stop: SIGKILL to the service's whole process group (PostgreSQL's backends, the
 * JVM's threads, the Temporal server), so nothing gets to flush or say goodbye; then the local
 * stack starts it again the way `stack up` would, recovering from whatever was on disk.
 */
export async function crashAndRestart(service: CrashableService, config: Config, paths: CachePaths, downMs: number): Promise<void> {
  const pid = runningPid(paths.run, DAEMON_NAME[service]);
  if (pid === undefined) throw new Error(`${service} is not running: nothing to crash`);
  // Local daemons are started detached, so each leads its own process group.
  process.kill(-pid, 'SIGKILL');
  await sleep(downMs);
  const quiet = () => undefined;
  if (service === 'postgres') await ensurePostgres(config, paths, quiet);
  else if (service === 'kafka') await ensureKafka(config, paths, quiet);
  else await ensureTemporal(config, paths, quiet);
}
