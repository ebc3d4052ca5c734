import { runRelayWorker } from '../../workers/relay.worker';
import { runWorkerMain } from '../../workers/run-main';
import { main as runExampleConsumer } from '../../examples/payments/consumer-worker';
import { main as runExampleRetention } from '../../examples/payments/retention-worker';
import { withExampleSettings } from '../../examples/example-settings';
import { localStackEnv } from './stack-config';

// `npm run worker:relay | worker:consumer | worker:retention`: one worker process on the local
// stack's services (wherever the environment names none), logging in as its own component's
// user, with the example's topic, group and inbox names (examples/example-settings.ts). The
// library reads only the environment, so the stack's is applied here first. (Not a
// preload: a worker's workflow threads inherit the process's Node flags.)

const WORKERS = {
  relay: () => runWorkerMain('relay worker', runRelayWorker),
  consumer: runExampleConsumer,
  retention: runExampleRetention,
};

const kind = process.argv[2];
if (kind !== 'relay' && kind !== 'consumer' && kind !== 'retention') {
  process.stderr.write(`usage: local-worker.ts relay|consumer|retention (got ${JSON.stringify(kind)})\n`);
  process.exit(2);
}
Object.assign(process.env, withExampleSettings(localStackEnv(process.env, { workerLogins: true })));
WORKERS[kind]();
