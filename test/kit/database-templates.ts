import crypto from 'node:crypto';
import { Client } from 'pg';
import { isAlive } from '../../tools/local-stack/processes';

// Migrated test databases copied from a template: a test run migrates one database per server and
// kind (the library alone, or with the example's tables) and gives each test file `CREATE
// DATABASE … TEMPLATE` of it, a copy inside PostgreSQL, instead of applying every migration again
// for each of the suite's eighty-odd files. The template is migrated by this run's own code, so a
// changed migration is in every copy. Only mocha runs use it (test/kit/template-databases-hook.ts
// turns it on and drops the templates at the end); a benchmark migrates its database itself.

const PREFIX = 'test_template_';
let enabled = false;
const templates = new Map<string, Promise<string>>();

/** Test databases are copied from templates from now on (the mocha root hook calls it). */
export function useTemplateDatabases(): void {
  enabled = true;
}

export function templateDatabasesEnabled(): boolean {
  return enabled;
}

/**
 * The name of this process's template of `kind` on the server `serverUrl` names, made on first
 * use: created, then migrated by `migrateInto(url)`, which must leave no connection to it open.
 */
export function templateDatabase(serverUrl: string, kind: string, migrateInto: (url: string) => Promise<void>): Promise<string> {
  const key = `${serverUrl}\n${kind}`;
  let template = templates.get(key);
  if (!template) {
    template = makeTemplate(serverUrl, kind, migrateInto);
    templates.set(key, template);
    // A failed template is not kept: the next test file tries again and reports its own error.
    template.catch(() => templates.delete(key));
  }
  return template;
}

async function makeTemplate(serverUrl: string, kind: string, migrateInto: (url: string) => Promise<void>): Promise<string> {
  const name = `${PREFIX}${process.pid}_${kind}_${crypto.randomBytes(3).toString('hex')}`;
  await admin(serverUrl, async (c) => {
    await dropOrphans(c);
    await c.query(`CREATE DATABASE ${name}`);
  });
  try {
    await migrateInto(withDatabase(serverUrl, name));
  } catch (err) {
    await admin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined);
    throw err;
  }
  return name;
}

/** Drops every template this process made (the end of a mocha run). */
export async function dropTemplateDatabases(): Promise<void> {
  const made = [...templates.entries()];
  templates.clear();
  for (const [key, template] of made) {
    const name = await template.catch(() => undefined);
    if (name) await admin(key.split('\n')[0]!, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined);
  }
}

/** Templates left by a run that was killed before its end (its process is gone). */
async function dropOrphans(c: Client): Promise<void> {
  const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [PREFIX]);
  for (const { datname } of rows) {
    const pid = Number(/^test_template_(\d+)_[a-z]+_[0-9a-f]{6}$/.exec(datname)?.[1]);
    if (pid > 0 && !isAlive(pid)) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function admin<T>(serverUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
