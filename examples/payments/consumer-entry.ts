import { workerEntry, type WorkerEntry } from 'temporal-outbox';

/** The example's consumer worker as a process to start, with the consumer's memory flags. */
export function exampleConsumerEntry(): WorkerEntry {
  return workerEntry('consumer', require.resolve('./consumer-worker'));
}
