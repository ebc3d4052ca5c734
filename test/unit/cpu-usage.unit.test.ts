import assert from 'node:assert/strict';
import { databaseOfPostgresTitle } from '../../bench/support/cpu-usage';

describe('which database a PostgreSQL process serves', () => {
  it('reads it from a backend’s or an autovacuum worker’s title', () => {
    assert.equal(databaseOfPostgresTitle('postgres: outbox bench_scaling_mx84_1a 127.0.0.1(50342) idle'), 'bench_scaling_mx84_1a');
    assert.equal(databaseOfPostgresTitle('postgres: outbox other_db [local] SELECT'), 'other_db');
    assert.equal(databaseOfPostgresTitle('postgres: autovacuum worker bench_memory_soak_x'), 'bench_memory_soak_x');
  });

  it('names none for the server’s shared processes, which stay the benchmark’s', () => {
    for (const title of ['postgres: walwriter', 'postgres: checkpointer', 'postgres: background writer', 'postgres: autovacuum launcher', '/usr/lib/postgresql/15/bin/postgres -D /data -p 54329']) assert.equal(databaseOfPostgresTitle(title), undefined, title);
  });
});
