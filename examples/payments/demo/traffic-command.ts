import type { Command } from 'commander';
import { confirmOneDemoPayment, ensureDemoAccounts, runAtRate } from './demo-traffic';
import { readPipelineStats } from './pipeline-stats';
import { createPool, loadConfig } from 'temporal-outbox';

/**
 * Demo payments only, against services and workers that already run (docker-compose.yml's
 * `demo-traffic` service): `demo` without the stack and the child workers it brings along.
 */
export function registerTrafficCommand(program: Command) {
  program
    .command('traffic')
    .description('confirm demo payments at a steady rate (payment row + payment_confirmed outbox row in one transaction) and print the pipeline’s state every 5 s')
    .option('--rate <n>', 'demo payments confirmed per second', (v) => Number(v), 20)
    .option('--duration <seconds>', 'stop after this many seconds (default: until SIGINT/SIGTERM)', (v) => Number(v))
    .action(async (opts: { rate: number; duration?: number }) => {
      if (!(opts.rate > 0)) throw new Error(`--rate must be a positive number, got ${opts.rate}`);
      const url = loadConfig().database.url;
      if (url === undefined) throw new Error('DATABASE_URL is not set');
      const pool = createPool(url, { max: 10 });
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      if (opts.duration) setTimeout(() => stop.abort(), opts.duration * 1000).unref();
      const say = (m: string) => console.log(`[traffic] ${m}`);
      const ticker = setInterval(() => {
        void readPipelineStats(pool)
          .then((s) => say(`confirmed ${s.confirmedPayments} | outbox pending ${s.outboxPending}, parked ${s.outboxParked} | inbox parked ${s.inboxParked} | credited ${s.balanceTotal} of ${s.confirmedTotal} confirmed (minor units)`))
          .catch(() => undefined);
      }, 5000);
      try {
        await ensureDemoAccounts(pool);
        say(`confirming ${opts.rate} payments/s`);
        say(`sent ${await runAtRate(opts.rate, stop.signal, () => confirmOneDemoPayment(pool))} payments`);
      } finally {
        clearInterval(ticker);
        await pool.end();
      }
    });
}
