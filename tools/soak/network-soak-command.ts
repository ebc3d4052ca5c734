import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { runNetworkSoak, type NetworkSoakResult } from './network-soak';
import { RESULTS_DIR, renderTable, writeTable } from './network-table';
import { runStoppingChildren } from './stop-on-signals';

const FULL = { minutes: 30 };

/**
 * `npm run soak -- --network [--minutes 30] [--faults 100] [--max-minutes M] [--seed S]`: runs the
 * network soak on the running local stack and writes its figures to tools/soak/results/: a full
 * run (≥ 30 minutes asked) to network-soak.json and .md and the matrix table of
 * docs/guarantees.md; a shorter one to network-soak-short.json and .md only. Each worker's whole
 * output goes to .cache/soak-worker-logs/ (or OUTBOX_TEST_WORKER_LOG_DIR). Exits non-zero when
 * anything was lost, double-applied or out of order, or a cell missed a bound; 130/143 after
 * SIGINT/SIGTERM, having stopped its worker processes and the fault proxy.
 */
export async function runNetworkSoakCommand(opts: { minutes: number; faults: number; maxMinutes?: number; seed?: number }): Promise<void> {
  const seed = opts.seed ?? Date.now() % 100_000;
  const maxMinutes = opts.maxMinutes ?? opts.minutes * 1.5;
  const log = (m: string) => process.stdout.write(`[network soak] ${m}\n`);
  // Interrupted (SIGINT, SIGTERM) or failed, the soak stops its workers and the fault proxy, and
  // kills any child process of the kit still running, before it exits (tools/soak/stop-on-signals.ts).
  let incomplete = false;
  const code = await runStoppingChildren(async (signal) => {
    log(`the gray-failure matrix for ≥ ${opts.minutes} min and ≥ ${opts.faults} faults (at most ${maxMinutes} min), seed ${seed}`);
    // A run asked for the full length is the one the docs show, with however many faults it managed.
    const full = opts.minutes >= FULL.minutes;
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    const name = full ? 'network-soak' : 'network-soak-short';
    const command = `npm run soak -- --network --minutes ${opts.minutes} --faults ${opts.faults} --max-minutes ${maxMinutes} --seed ${seed}`;
    // Every worker's whole output (relays, consumers, retention) in a file of its own, unless
    // OUTBOX_TEST_WORKER_LOG_DIR names another place: a miss is explained by lines the cells do
    // not keep (test/kit/worker-log-file.ts).
    process.env.OUTBOX_TEST_WORKER_LOG_DIR ??= path.join(PROJECT_ROOT, '.cache', 'soak-worker-logs', `${name}-${seed}`);
    log(`worker logs in ${process.env.OUTBOX_TEST_WORKER_LOG_DIR}`);
    // Written after every fault (complete: false until the end), so a run that is killed still
    // leaves its figures; the docs table is written only from a completed run.
    const save = (result: NetworkSoakResult) => {
      fs.writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify({ command, ...result }, null, 2)}\n`);
      fs.writeFileSync(path.join(RESULTS_DIR, `${name}.md`), `# Network soak${full ? ': the gray-failure matrix' : ' (short run)'}\n\n${renderTable(result)}\n`);
    };
    const result = await runNetworkSoak({ ...opts, maxMinutes, seed, log, progress: save, signal });
    if (full) writeTable(result);
    process.stdout.write(`${renderTable(result)}\n`);
    log(`saved tools/soak/results/${name}.json and ${name}.md${full ? ', and the table in docs/guarantees.md' : ''}`);
    const missed = result.runs.filter((r) => r.missed.length > 0).length;
    const { lost, doubleApplied, keysOutOfOrder, drained } = result.final!;
    incomplete = Boolean(lost || doubleApplied || keysOutOfOrder || !drained || missed);
  }, log);
  process.exit(code || (incomplete ? 1 : 0));
}
