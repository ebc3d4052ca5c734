import { loadConfig, runConsumerWorker, type AnyEventHandler } from 'temporal-outbox';
import { EXAMPLE_DEFAULT_HANDLERS, withExampleSettings } from '../example-settings';
import { orderShippedHandler } from '../shipping/order-shipped-handler';
import { paymentConfirmedHandler } from './credit-handler';

// The example's consumer worker, as a service of its own would write one: the library's consumer
// with the example's handlers. `npm run worker:consumer`, the demo and docker-compose run it.
// Its topic, group and inbox are the example's (examples/example-settings.ts) unless the
// environment names others. Which handlers, and the largest credit, are the example's own settings:
//   CONSUMER_HANDLERS=payment_confirmed,order_shipped   (default payment_confirmed)
//   CONSUMER_MAX_CREDIT_AMOUNT=<minor units>             (default 100,000,000,000)

const HANDLER_NAMES = ['payment_confirmed', 'order_shipped'] as const;
const DEFAULT_MAX_CREDIT_AMOUNT = 100_000_000_000;

/** The example's handlers that `env` names, or the reason it names none right. */
export function exampleHandlers(env: NodeJS.ProcessEnv): AnyEventHandler[] {
  const names = (env.CONSUMER_HANDLERS || EXAMPLE_DEFAULT_HANDLERS).split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(HANDLER_NAMES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) throw new Error(`CONSUMER_HANDLERS: name one or more of ${HANDLER_NAMES.join(', ')} (got ${env.CONSUMER_HANDLERS})`);
  const maxCreditAmount = env.CONSUMER_MAX_CREDIT_AMOUNT ? Number(env.CONSUMER_MAX_CREDIT_AMOUNT) : DEFAULT_MAX_CREDIT_AMOUNT;
  if (!Number.isSafeInteger(maxCreditAmount) || maxCreditAmount <= 0) throw new Error(`CONSUMER_MAX_CREDIT_AMOUNT: must be a positive integer (got ${env.CONSUMER_MAX_CREDIT_AMOUNT})`);
  return names.map((name) => (name === 'payment_confirmed' ? paymentConfirmedHandler({ maxCreditAmount }) : orderShippedHandler()));
}

/**
 * Runs until SIGINT or SIGTERM (the first drains and leaves the group, a second exits at once);
 * exits non-zero on failure so a supervisor restarts it.
 */
export function main(): void {
  let handlers: AnyEventHandler[];
  let config: ReturnType<typeof loadConfig>;
  try {
    handlers = exampleHandlers(process.env);
    // The worker runs nothing else in its process: the lean kafkajs encoder is safe here.
    config = loadConfig(withExampleSettings({ KAFKAJS_LEAN_ENCODER: 'true', ...process.env }));
  } catch (err) {
    process.stderr.write(`consumer worker refused to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  runConsumerWorker(config, { handlers, signal: controller.signal, installTemporalRuntime: true }).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`consumer worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) main();
