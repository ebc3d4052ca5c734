import assert from 'node:assert/strict';
import { databaseOfPostgresTitle, microsPerEvent } from '../../bench/support/cpu-usage';

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

describe('CPU per event', () => {
  it('divides each group’s CPU seconds by the events, in µs, to the places asked', () => {
    assert.deepEqual(microsPerEvent({ 'consumer worker': 15.2, postgres: 5.4 }, 200_000), { 'consumer worker': 76, postgres: 27 });
    assert.deepEqual(microsPerEvent({ kafka: 1.461 }, 200_000, 1), { kafka: 7.3 });
  });

  it('reports a run that credited nothing per one event instead of dividing by zero', () => {
    assert.deepEqual(microsPerEvent({ postgres: 0.01 }, 0), { postgres: 10000 });
  });
});
