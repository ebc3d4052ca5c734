import {
  getDefaultLogger,
  initializePollingMessageListener,
  initializeReplicationMessageListener,
  type GeneralMessageHandler,
  type TransactionalMessage,
} from 'pg-transactional-outbox';
import { peerListenerSettings, type PeerListenerOptions } from './peer-settings';

// One pg-transactional-outbox listener in a process of its own (so its CPU is measured apart from
// the benchmark's), set up as the package's README sets up an outbox listener. Its message
// publisher is where a broker send would go; here there is no broker: it records when it was
// called, which is the peer's "delivered" moment, and the parent joins that with commit times.
// Started by PeerListenerProcess with the options as JSON in PEER_LISTENER_OPTIONS.

const options = JSON.parse(process.env.PEER_LISTENER_OPTIONS ?? '') as PeerListenerOptions;
const logger = getDefaultLogger(`peer-${options.kind}`);
(logger as unknown as { level: string }).level = 'warn';

let handled: [string, number][] = [];
const publisher: GeneralMessageHandler = {
  handle: async (message: TransactionalMessage) => {
    handled.push([message.id, Date.now()]);
  },
};

const flush = () => {
  if (handled.length === 0) return;
  process.send!({ type: 'handled', entries: handled });
  handled = [];
};
const flushTimer = setInterval(flush, 50);

const config = peerListenerSettings(options);
const [shutdown] =
  config.kind === 'replication'
    ? // Its default concurrency: one message at a time, as in the README's example.
      initializeReplicationMessageListener(config.config, publisher, logger)
    : initializePollingMessageListener(config.config, publisher, logger);

process.on('message', (m: { type: string }) => {
  if (m.type !== 'stop') return;
  void shutdown()
    .catch((err: unknown) => console.error(err))
    .finally(() => {
      clearInterval(flushTimer);
      flush();
      process.send!({ type: 'stopped' }, () => process.exit(0));
    });
});
process.send!({ type: 'started' });
