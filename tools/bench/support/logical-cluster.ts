import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { loadStackConfig } from '../../local-stack/stack-config';
import { cachePaths } from '../../local-stack/paths';
import { ensurePostgres, stopPostgres } from '../../local-stack/postgres';

export interface BenchCluster {
  /** Server URL (database `outbox`); scratch databases are created beside it. */
  url: string;
  walLevel: string;
  /** Where it came from, for the report. */
  origin: 'configured' | 'scratch';
  stop(): Promise<void>;
}

async function walLevel(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return String((await client.query('SHOW wal_level')).rows[0].wal_level);
  } finally {
    await client.end();
  }
}

/**
 * A PostgreSQL server that can decode logical replication, for a benchmark that runs a
 * logical-replication listener. The configured server when its wal_level is already `logical`;
 * otherwise, if the configured server is this project's local cluster (which runs with
 * wal_level=logical from its next start, tools/local-stack/postgres.ts) and the machine has the server
 * binaries, a scratch cluster of the same build on its own port in a temporary folder — never a
 * restart of the shared one. Returns the configured server unchanged when neither applies.
 */
export async function logicalCapableCluster(log: (m: string) => void): Promise<BenchCluster> {
  const config = loadStackConfig();
  const level = await walLevel(config.database.url);
  if (level === 'logical' || !config.database.local || process.env.BENCH_SCRATCH_CLUSTER === '0') {
    return { url: config.database.url, walLevel: level, origin: 'configured', stop: async () => undefined };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-bench-pg-'));
  fs.chmodSync(dir, 0o755); // the PostgreSQL service account (when we run as root) must reach it
  const port = 23_000 + Math.floor(Math.random() * 2000);
  const scratch = loadStackConfig({ ...process.env, OUTBOX_CACHE_DIR: dir, LOCAL_PG_PORT: String(port), DATABASE_URL: undefined });
  const paths = cachePaths(dir);
  log(`the configured PostgreSQL runs with wal_level=${level} (logical from its next start); starting a scratch cluster on port ${port} for this run`);
  await ensurePostgres(scratch, paths, log);
  return {
    url: scratch.database.url,
    walLevel: await walLevel(scratch.database.url),
    origin: 'scratch',
    async stop() {
      await stopPostgres(paths);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
