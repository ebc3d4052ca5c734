import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { StackError } from '../errors';
import { TEMPORAL_DATABASE, VISIBILITY_DATABASE } from './server-config';

// Temporal's two databases on the stack's PostgreSQL, brought to the schema version of the built
// server with Temporal's own SQL tool. Safe to run on every start: the tool applies only the
// versioned steps a database lacks, which is also how a newer server version upgrades them.

export interface DatabaseAccess {
  host: string;
  port: number;
  user: string;
  password?: string;
}

/** The tool's embedded schema folders (listed by `sql setup-schema --help`). */
const SCHEMA_NAMES = { main: 'postgresql/v12/temporal', visibility: 'postgresql/v12/visibility' } as const;

export async function ensureTemporalSchemas(
  sqlTool: string,
  access: DatabaseAccess,
  log: (m: string) => void,
  databases: { main: string; visibility: string } = { main: TEMPORAL_DATABASE, visibility: VISIBILITY_DATABASE },
): Promise<void> {
  for (const [kind, database] of Object.entries(databases) as ['main' | 'visibility', string][]) {
    const schemaName = SCHEMA_NAMES[kind];
    const fresh = await ensureDatabase(access, database);
    if (fresh) {
      log(`created database ${database} for Temporal; setting up its schema`);
      // Version 0.0 creates only the tool's ledger tables; update-schema then applies every step.
      runSqlTool(sqlTool, access, database, ['setup-schema', '--version', '0.0']);
    }
    runSqlTool(sqlTool, access, database, ['update-schema', '--schema-name', schemaName]);
  }
}

/** Creates the database unless it exists; true when it has no schema ledger yet. */
async function ensureDatabase(access: DatabaseAccess, database: string): Promise<boolean> {
  const admin = new Client({ ...access, database: 'postgres' });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) {
      // The names are constants of the stack's code, never input; CREATE DATABASE takes no parameters.
      await admin.query(`CREATE DATABASE ${database}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created concurrently by another `up`
      });
    }
  } finally {
    await admin.end();
  }
  const client = new Client({ ...access, database });
  await client.connect();
  try {
    const { rows } = await client.query<{ ledger: string | null }>(`SELECT to_regclass('schema_version')::text AS ledger`);
    return rows[0]?.ledger === null;
  } finally {
    await client.end();
  }
}

function runSqlTool(sqlTool: string, access: DatabaseAccess, database: string, command: string[]) {
  const args = ['--plugin', 'postgres12', '--endpoint', access.host, '--port', String(access.port), '--user', access.user, '--database', database, ...command];
  try {
    // The password goes by environment, never on a command line that `ps` shows.
    execFileSync(sqlTool, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(access.password ? { SQL_PASSWORD: access.password } : {}) },
      timeout: 5 * 60_000,
    });
  } catch (err) {
    const output = `${(err as { stdout?: Buffer }).stdout ?? ''}${(err as { stderr?: Buffer }).stderr ?? ''}`.trim().split('\n').slice(-6).join('\n');
    throw new StackError(`Temporal's SQL tool failed on database ${database} (${command[0]}):\n${output}`);
  }
}
