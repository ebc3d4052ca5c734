import assert from 'node:assert/strict';
import { summarisePeerRuns, type ContenderRun } from '../../tools/bench/support/peer/peer-summary';
import { measuredTable, replaceMarkedBlock, TABLE_BEGIN, TABLE_END } from '../../tools/bench/suite/measured-table';
import { TARGETS, type ResultFile } from '../../tools/bench/suite/targets';

const defaults = { shards: 8, batchSize: 2000 };

/** Sample results shaped as the benchmarks write them (only the fields the table reads). */
const sample: Record<string, ResultFile> = {
  relay: {
    settings: { events: 200000 },
    machine: { at: '2026-12-03T10:00:00.000Z' },
    results: {
      throughputSummary: {
        batchSize: 2000,
        shards: 8,
        defaultMode: 'session',
        byMode: { session: { median: 21500, runs: [21000, 21500, 22000] }, local: { median: 30000, runs: [30000] } },
      },
      latency: [
        { mode: 'session', p50Ms: 30, p99Ms: 90 },
        { mode: 'local', p50Ms: 20, p99Ms: 40 },
        { mode: 'session', p50Ms: 31, p99Ms: 112 },
      ],
      idle: { shards: 2, databaseTransactionsPerIdleMinute: 27, historyEventsPerIdleMinutePerShard: [7, 7] },
    },
  },
  'relay-scale': { results: { summary: { oneWorkerMedian: 10000, twoWorkersMedian: 19000, twoOverOne: 1.9 } } },
  pipeline: { results: { p50Ms: 70, p99Ms: 190, events: 30000, balancesExact: true } },
  'memory-soak': {
    settings: { minutes: 5.9 },
    results: {
      exact: true,
      checks: { committed: 1_000_000 },
      summary: [
        { worker: 'relay', peakMB: 241.2, peakMiB: 230, levelledMB: 230 },
        { worker: 'consumer', peakMB: 251.3, peakMiB: 239.7, levelledMB: 240 },
        { worker: 'retention', peakMB: 200, peakMiB: 190.7, levelledMB: 190 },
      ],
    },
  },
  scaling: {
    settings: { events: 200000 },
    results: {
      summary: {
        cpuCapPerWorker: 0.2,
        curve: [
          { workers: 1, medianEventsPerSecond: 3000, runs: [2900, 3000, 3100] },
          { workers: 2, medianEventsPerSecond: 5500, runs: [5400, 5500, 5600] },
          { workers: 3, medianEventsPerSecond: 7800, runs: [7700, 7800, 7900] },
        ],
        twoOverOne: 1.83,
        threeOverOne: 2.6,
      },
    },
  },
};

const rowOf = (table: string, startsWith: string) => {
  const row = table.split('\n').find((l) => l.startsWith(`| ${startsWith}`));
  assert.ok(row, `no row for "${startsWith}" in\n${table}`);
  return row;
};

describe('the measured table', () => {
  const table = measuredTable(TARGETS, (file) => sample[file], defaults);

  it('takes the relay throughput of the default mode and settings, not the best one, and judges it', () => {
    const row = rowOf(table, 'relay ≥ 20,000');
    assert.match(row, /\*\*met\*\* \| 21,500\/s \(median of 3 runs of 200,000 events; session mode, batch 2000, 8 shards\)/);
    assert.match(row, /`npm run bench:relay` \(2026-12-03\)/);
    const withSummary = (summary: object) => measuredTable(TARGETS, (file) => (file === 'relay' ? { ...sample.relay, results: { ...sample.relay!.results, throughputSummary: summary } } : sample[file]), defaults);
    const slower = withSummary({ batchSize: 2000, shards: 8, defaultMode: 'session', byMode: { session: { median: 19999, runs: [19999] }, local: { median: 30000, runs: [30000] } } });
    assert.match(rowOf(slower, 'relay ≥ 20,000'), /\*\*not met\*\* \| 19,999\/s/);
    // A file measured at other settings than today's defaults is no result for the target.
    assert.match(rowOf(withSummary({ batchSize: 2000, shards: 2, defaultMode: 'session', byMode: { session: { median: 25000, runs: [25000] } } }), 'relay ≥ 20,000'), /\| no result \|/);
  });

  it('requires every latency run under the target, not the median', () => {
    assert.match(rowOf(table, 'commit → on Kafka'), /\*\*not met\*\* \| p99 90, 112 ms; p50 30, 31 ms \(2 runs\)/);
  });

  it('meets the pipeline target only when both percentiles are within it', () => {
    assert.match(rowOf(table, 'commit → balance credited'), /\*\*met\*\* \| p50 70 ms, p99 190 ms/);
  });

  it('judges memory per worker in MB with MiB beside it, and asks for a 30-minute soak', () => {
    // The consumer's 239.7 MiB = 251.3 MB is over 250 MB; the relay's 230 MiB = 241 MB is under.
    const row = rowOf(table, 'each worker ≤ 250 MB');
    assert.match(row, /\*\*not met\*\* \| relay peak 241 MB \(230 MiB\), levelled 230 MB: met; consumer peak 251 MB \(240 MiB\), levelled 240 MB: not met; retention peak 200 MB/);
    assert.match(row, /\(5.9-minute soak, 1,000,000 events, counts exact: true\)/);
    // All three under 250 MB but 5.9 minutes is no 30-minute soak; 30 minutes makes it met.
    const under = (minutes: number) => ({ ...sample['memory-soak']!, settings: { minutes }, results: { ...sample['memory-soak']!.results, summary: [{ worker: 'relay', peakMB: 241, peakMiB: 230, levelledMB: 230 }] } });
    assert.match(rowOf(measuredTable(TARGETS, (f) => (f === 'memory-soak' ? under(5.9) : sample[f]), defaults), 'each worker ≤ 250 MB'), /\*\*not met\*\*/);
    assert.match(rowOf(measuredTable(TARGETS, (f) => (f === 'memory-soak' ? under(30.2) : sample[f]), defaults), 'each worker ≤ 250 MB'), /\*\*met\*\*/);
  });

  it('says which results are missing instead of inventing a figure', () => {
    assert.match(rowOf(table, 'credits through the inbox'), /\| no result \| no bench\/results\/consumer.json yet \|/);
    assert.match(rowOf(table, 'against pg-transactional-outbox'), /\| no result \| no bench\/results\/peer.json yet \|/);
  });

  it('judges the peer comparison from the ratios the peer benchmark computes', () => {
    const run = (contender: string, test: 'throughput' | 'latency', x: Partial<ContenderRun>): ContenderRun => ({ contender, repeat: 0, test, events: 1000, processed: 1000, loadAverage1m: 1, ...x });
    const cpu = (worker: number, postgres: number) => ({ wallSeconds: 1, cores: 2, coresBusy: 1, cpuSeconds: { worker, postgres, kafka: 0.05, temporal: 0.05 } });
    const runs = [
      run('ours', 'throughput', { eventsPerSecond: 20000, cpu: cpu(0.05, 0.05) }),
      run('peer a', 'throughput', { eventsPerSecond: 1500, cpu: cpu(0.5, 0.5) }),
      run('peer b', 'throughput', { eventsPerSecond: 500, cpu: cpu(0.4, 0.4) }),
      run('ours', 'latency', { p50Ms: 40, p99Ms: 100 }),
      run('peer a', 'latency', { p50Ms: 180, p99Ms: 600 }),
      run('peer b', 'latency', { p50Ms: 120, p99Ms: 900 }),
    ];
    const summary = summarisePeerRuns(runs, 'ours');
    // Each figure against the peer's best at it: throughput a, p50 b, p99 a, CPU b.
    assert.deepEqual(summary.ratios, { throughput: 13.33, p50: 3, p99: 6, cpuWorkerAndPostgres: 8 });
    // Kafka and Temporal count for ours only: they are not in the peer's path.
    assert.deepEqual(summary.contenders.map((c) => c.cpuMicrosPerEvent.all), [200, 1000, 800]);
    const withPeer = measuredTable(TARGETS, (file) => (file === 'peer' ? { results: { summary } } : sample[file]), defaults);
    assert.match(rowOf(withPeer, 'against pg-transactional-outbox'), /\*\*met\*\* \| throughput 13.33× its best; p50 3× and p99 6× lower; CPU per event 8× less/);
  });

  it('judges capped scale-out by the 2-worker / 1-worker ratio of the medians, beside the uncapped row', () => {
    assert.match(rowOf(table, 'scale-out where the worker is the bottleneck'), /\| \*\*met\*\* \| 1 → 2 → 3 workers at 0.2 CPU each: 3,000 → 5,500 → 7,800\/s \(2\/1 1.83×, 3\/1 2.6×; medians of 3 runs of 200,000 events\) \|/);
    const below = measuredTable(TARGETS, (file) => (file === 'scaling' ? { ...sample.scaling, results: { summary: { ...sample.scaling!.results.summary, twoOverOne: 1.79 } } } : sample[file]), defaults);
    assert.match(rowOf(below, 'scale-out where the worker is the bottleneck'), /\| \*\*not met\*\* \|/);
    assert.match(rowOf(table, 'scale-out: a second worker process'), /\| \*\*met\*\* \| 1 → 2 workers: 10,000 → 19,000\/s/);
  });

  it('replaces only the marked block of a document', () => {
    const doc = `# Title\n\nintro\n\n${TABLE_BEGIN}\n| old | table |\n${TABLE_END}\n\nafter\n`;
    const out = replaceMarkedBlock(doc, '| new |');
    assert.equal(out, `# Title\n\nintro\n\n${TABLE_BEGIN}\n| new |\n${TABLE_END}\n\nafter\n`);
    assert.throws(() => replaceMarkedBlock('# no markers\n', '| new |'), /has no measured-table block/);
  });
});
