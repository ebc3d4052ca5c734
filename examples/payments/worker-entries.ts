import { workerEntry, type WorkerEntry } from 'temporal-outbox';

/** The example's consumer worker as a process to start, with the consumer's memory flags. */
export function exampleConsumerEntry(): WorkerEntry {
  return workerEntry('consumer', require.resolve('./consumer-worker'));
}

/** The example's retention worker (with its audit checks) as a process to start, with the retention worker's flags. */
export function exampleRetentionEntry(): WorkerEntry {
  return workerEntry('retention', require.resolve('./retention-worker'));
}
