import assert from 'node:assert/strict';
import { inSchema, validateSchemaName } from '../../src/db/schema';

describe('the library schema name and the rewrite of its qualifier', () => {
  it('rewrites qualified names and the schema named by itself, and nothing else', () => {
    const text = `CREATE SCHEMA IF NOT EXISTS temporal_outbox;
      GRANT USAGE ON SCHEMA temporal_outbox TO outbox_relay;
      SELECT has_column_privilege('temporal_outbox.outbox_relay_layout', 'shard_count', 'SELECT');
      INSERT INTO temporal_outbox.outbox_events (payload) VALUES ('{"note":"temporal_outbox is a word"}')`;
    assert.equal(
      inSchema(text, 'acme_outbox'),
      `CREATE SCHEMA IF NOT EXISTS acme_outbox;
      GRANT USAGE ON SCHEMA acme_outbox TO outbox_relay;
      SELECT has_column_privilege('acme_outbox.outbox_relay_layout', 'shard_count', 'SELECT');
      INSERT INTO acme_outbox.outbox_events (payload) VALUES ('{"note":"temporal_outbox is a word"}')`,
    );
    assert.equal(inSchema(text), text, 'the default leaves the text as written');
    assert.equal(inSchema('SELECT 1 FROM my_temporal_outbox.t', 'acme'), 'SELECT 1 FROM my_temporal_outbox.t', 'only the whole word');
  });

  it('refuses names that would need quoting or are reserved, with the reason', () => {
    for (const bad of ['Acme', 'acme-outbox', 'acme; DROP TABLE x', '', '1acme', 'pg_outbox', 'a'.repeat(64)]) {
      assert.throws(() => validateSchemaName(bad), /schema/, bad);
      assert.throws(() => inSchema('SELECT 1 FROM temporal_outbox.outbox_events', bad), /schema/, bad);
    }
    assert.equal(validateSchemaName('acme_outbox2'), 'acme_outbox2');
  });
});
