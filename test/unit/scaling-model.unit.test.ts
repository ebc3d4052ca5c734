import assert from 'node:assert/strict';
import { findCpuController } from '../../tools/bench/support/cpu-cap';
import { coresFor, eventsPerSecondPerCore, modelFromRuns, predictThroughput } from '../../tools/bench/support/scaling-model';

describe('the scaling model', () => {
  const costs = {
    worker: { cpuMicrosPerEvent: 50, maxCores: 8 },
    postgres: { cpuMicrosPerEvent: 40 },
    temporal: { cpuMicrosPerEvent: 10, maxCores: 1 },
  };

  it('turns CPU per event into events/s per core, and says when a cost was too small to measure', () => {
    assert.deepEqual(eventsPerSecondPerCore({ ...costs, walWriter: { cpuMicrosPerEvent: 0, maxCores: 1 } }), { worker: 20_000, postgres: 25_000, temporal: 100_000, walWriter: null });
  });

  it('splits the cores in proportion to each component’s cost while no single-core component is the limit', () => {
    const p = predictThroughput(costs, 4);
    assert.equal(p.eventsPerSecond, 40_000); // 4 cores / 100 µs per event
    assert.equal(p.limitedBy, 'CPU (every component)');
    assert.deepEqual(p.coresUsed, { worker: 2, postgres: 1.6, temporal: 0.4 });
  });

  it('stops at a component that cannot use more cores, and names it', () => {
    const p = predictThroughput(costs, 16); // proportional: 160,000/s; Temporal on one core: 100,000/s
    assert.equal(p.eventsPerSecond, 100_000);
    assert.equal(p.limitedBy, 'temporal (at most 1 core)');
    assert.equal(p.coresUsed.temporal, 1);
  });
});

describe('the model from the benchmark runs', () => {
  const run = (worker: number, postgres: number) => ({ cpuMicrosPerEvent: { 'relay worker': worker, postgres, 'postgres walwriter': 1, kafka: 5, temporal: 4, other: 500 } });
  const model = modelFromRuns([run(60, 90), run(80, 110), run(70, 100)], { label: 'relay worker', maxCores: 2, unit: 'shards' }, [4, 16]);

  it('takes each component’s median, splits the WAL writer out of PostgreSQL and leaves other processes out', () => {
    assert.deepEqual(model.inputsCpuMicrosPerEvent, { 'relay worker': 70, 'postgres (without the WAL writer)': 99, 'postgres WAL writer': 1, kafka: 5, temporal: 4 });
  });

  it('predicts for workers elsewhere from the services alone, until the shards (one core each) are the limit', () => {
    // Services: 109 µs per event → 4 cores: 36,697/s; the relay's 2 shards: 2 cores / 70 µs = 28,571/s.
    assert.equal(model.workersElsewhere[0]!.eventsPerSecond, 28_571);
    assert.match(model.workersElsewhere[0]!.limitedBy, /relay worker \(2 shards/);
    assert.equal(model.oneMachine[0]!.eventsPerSecond, Math.round(4e6 / 179));
  });
});

describe('the cores a target rate takes', () => {
  const costs = { worker: { cpuMicrosPerEvent: 40, maxCores: 6 }, postgres: { cpuMicrosPerEvent: 20 }, temporal: { cpuMicrosPerEvent: 12, maxCores: 1 } };

  it('adds up each component’s cores at that rate', () => {
    // 50,000/s × (40 + 20 + 12) µs = 3.6 cores.
    assert.deepEqual(coresFor(costs, 50_000), { cores: 3.6, coresUsed: { worker: 2, postgres: 1, temporal: 0.6 } });
  });

  it('says which serial component no number of cores gets past', () => {
    // Temporal at 12 µs on its one core: 83,333/s at most.
    assert.deepEqual(coresFor(costs, 100_000), { unreachable: 'temporal (at most 1 core: 83333/s)' });
  });
});

describe('finding the cgroup cpu controller', () => {
  const v1 = 'tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\ncgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n';
  const v2 = 'cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n';

  it('takes the v1 hierarchy that has the cpu controller, not cpuacct', () => {
    assert.deepEqual(findCpuController(v1, () => 'hugetlb'), { version: 1, dir: '/sys/fs/cgroup/cpu' });
  });

  it('takes cgroup v2 only when its controllers include cpu', () => {
    assert.deepEqual(findCpuController(v2, () => 'cpuset cpu io memory pids'), { version: 2, dir: '/sys/fs/cgroup' });
    assert.equal(findCpuController(v2, () => 'cpuset io memory'), undefined);
    assert.equal(findCpuController('proc /proc proc rw 0 0\n', () => undefined), undefined);
  });
});
