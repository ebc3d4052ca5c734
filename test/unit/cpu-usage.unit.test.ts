import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { databaseOfPostgresTitle, measureCpu, microsPerEvent } from '../../tools/bench/support/cpu-usage';

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

describe('CPU by process', () => {
  it('counts each labelled worker under its own label (a run with a relay and a consumer worker)', async function () {
    if (process.platform !== 'linux') this.skip();
    // Two real processes that burn 400 ms of CPU, say so, then wait to be killed (an exited one is
    // not counted). The measurement stops once both have said so, not after a fixed time: on a busy
    // machine, or a Node that starts slower, a fixed wait ended before the burning did.
    const burner = () =>
      spawn(process.execPath, ['-e', 'const t = process.cpuUsage(); while ((process.cpuUsage(t).user + process.cpuUsage(t).system) < 400_000); console.log("burnt"); setInterval(() => {}, 1000);'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    const burnt = (p: ReturnType<typeof burner>) => new Promise<void>((resolve) => p.stdout!.on('data', (d: Buffer) => d.toString().includes('burnt') && resolve()));
    const relay = burner();
    const consumer = burner();
    try {
      const cpu = measureCpu(() => ({ 'relay worker': [relay.pid!], 'consumer worker': [consumer.pid!] }));
      const bound = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the burners did not finish within 20 s')), 20_000).unref());
      await Promise.race([Promise.all([burnt(relay), burnt(consumer)]), bound]);
      const { cpuSeconds } = cpu.stop();
      assert.ok((cpuSeconds['relay worker'] ?? 0) >= 0.1, `relay worker ${cpuSeconds['relay worker']}`);
      assert.ok((cpuSeconds['consumer worker'] ?? 0) >= 0.1, `consumer worker ${cpuSeconds['consumer worker']}`);
    } finally {
      relay.kill();
      consumer.kill();
      await Promise.all([once(relay, 'exit'), once(consumer, 'exit')]);
    }
  });
});
