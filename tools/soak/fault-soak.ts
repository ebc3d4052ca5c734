import { parseArgs } from 'node:util';
import { saveBenchmark } from '../bench/support/report';
import { runBenchmark } from '../bench/support/run-benchmark';
import { runFaultSoak } from './run-fault-soak';
import { runNetworkSoakCommand } from './network-soak-command';

// The fault soak anyone can rerun (issue 11): bounded in time and count, loopback only, on a
// stack of its own. Prints and saves (tools/bench/results/fault-soak.json) what happened and what it cost:
//   npm run soak                                   (50,000 events, 50 worker kills, 3 crashes of each service)
//   npm run soak -- --events 5000 --worker-kills 6 --service-crashes 1 --fault-every 5   (short)
// and the gray-failure matrix, on the running local stack (tools/soak/network-soak.ts):
//   npm run soak -- --network                      (≥ 30 minutes and ≥ 100 faults)
//   npm run soak -- --network --minutes 3 --faults 6                                       (short)

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '50000' },
    'worker-kills': { type: 'string', default: '50' },
    'service-crashes': { type: 'string', default: '3' },
    'fault-every': { type: 'string', default: '8' },
    'max-minutes': { type: 'string' },
    network: { type: 'boolean', default: false },
    minutes: { type: 'string', default: '30' },
    faults: { type: 'string', default: '100' },
    seed: { type: 'string' },
  },
});

if (args.network) {
  void runNetworkSoakCommand({ minutes: Number(args.minutes), faults: Number(args.faults), maxMinutes: args['max-minutes'] === undefined ? undefined : Number(args['max-minutes']), seed: args.seed === undefined ? undefined : Number(args.seed) });
} else runBenchmark(async () => {
  const options = {
    events: Number(args.events),
    workerKills: Number(args['worker-kills']),
    serviceCrashes: Number(args['service-crashes']),
    faultEverySeconds: Number(args['fault-every']),
    maxMinutes: Number(args['max-minutes'] ?? '25'),
  };
  const result = await runFaultSoak({ ...options, log: (m) => console.log(`[soak] ${m}`) });
  console.log(
    [
      `events:                ${result.events.total} (${result.events.api} through enqueue, ${result.events.sql} as plain SQL; ${result.events.failedTransactions} transactions failed during outages and were retried)`,
      `worker kills (-9):     ${result.kills.total} (relay ${result.kills.relay}, consumer ${result.kills.consumer})`,
      `service crashes (-9):  PostgreSQL ${result.crashes.postgres}, Kafka ${result.crashes.kafka}, Temporal ${result.crashes.temporal}`,
      `duplicates delivered:  ${result.duplicatesDelivered} (extra copies on the topic: the relay re-published after a crash)`,
      `duplicates absorbed:   ${result.duplicatesAbsorbed} (at least: the consumer's counter, summed over its processes)`,
      `lost:                  ${result.lost}`,
      `double-applied:        ${result.doubleApplied}`,
      `parked:                ${result.parked}`,
      `took:                  ${result.seconds} s${result.drained ? '' : ' (did NOT drain before the deadline)'}`,
    ].join('\n'),
  );
  const full = options.events >= 50_000 && options.workerKills >= 50 && options.serviceCrashes >= 3;
  const written = await saveBenchmark({
    name: full ? 'fault-soak' : `fault-soak-${options.events}`,
    command: `npm run soak -- --events ${options.events} --worker-kills ${options.workerKills} --service-crashes ${options.serviceCrashes} --fault-every ${options.faultEverySeconds} --max-minutes ${options.maxMinutes}`,
    settings: { ...options, stack: 'a stack of its own on loopback ports: PostgreSQL, one Kafka broker, the Temporal dev server; one relay and one consumer worker under a restart loop' },
    results: result,
  });
  console.log(`saved: ${written.join(', ')}`);
  if (result.lost !== 0 || result.doubleApplied !== 0 || !result.drained) process.exitCode = 1;
});
