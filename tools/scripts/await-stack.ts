import { isAlive, sleep } from '../local-stack/processes';
import { stackStatus } from '../local-stack/stack';
import { loadStackConfig } from '../local-stack/stack-config';

// `npx tsx tools/scripts/await-stack.ts <pid> <timeout s>`: waits until every local service of the
// stack the environment names runs and listens, as long as process <pid> lives. CI's side steps
// (tools/scripts/ci-steps.sh) share the suite's PostgreSQL and Kafka: started only once the
// suite's `stack run` has the whole stack up, their own `stack run` finds those running, so it
// neither starts them a second time nor, at its end, stops them under the suite. Exits 0 when the
// stack is up, 1 when <pid> ended first (the suite failed before its stack was up) or on the timeout.

async function main() {
  const pid = Number(process.argv[2]);
  const timeoutS = Number(process.argv[3]);
  if (!(pid > 0) || !(timeoutS > 0)) {
    process.stderr.write('usage: await-stack.ts <pid to outlive> <timeout s>\n');
    process.exit(2);
  }
  const config = loadStackConfig();
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const local = (await stackStatus(config)).filter((s) => s.mode === 'local');
    const missing = local.filter((s) => !(s.pid && s.listening)).map((s) => s.service);
    if (missing.length === 0) {
      process.stdout.write(`[await-stack] up: ${local.map((s) => s.service).join(', ')}\n`);
      return;
    }
    if (!isAlive(pid)) throw new Error(`process ${pid} ended before the stack was up (missing: ${missing.join(', ')})`);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutS} s waiting for the stack (missing: ${missing.join(', ')})`);
    await sleep(2000);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`[await-stack] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
