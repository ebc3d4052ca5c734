import { startBalancer } from './balancer';

// The balancer as a daemon of the local stack: `balancer-main.ts <listen port> <upstream port>…`,
// all on 127.0.0.1. Stopped by SIGTERM like the stack's other daemons.

const [listen, ...upstreams] = process.argv.slice(2).map(Number);
if (!listen || upstreams.length === 0 || [listen, ...upstreams].some((p) => !Number.isInteger(p))) {
  process.stderr.write('usage: balancer-main.ts <listen port> <upstream port>...\n');
  process.exit(2);
}
startBalancer({ host: '127.0.0.1', port: listen, upstreams: upstreams.map((port) => ({ host: '127.0.0.1', port })) })
  .then((b) => {
    process.stdout.write(`balancing 127.0.0.1:${b.port} over ${upstreams.map((p) => `127.0.0.1:${p}`).join(', ')}\n`);
    const stop = () => void b.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  })
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
