import { WORKER_ENV, WORKER_NODE_ARGS } from './node-args';

// The worker entry points as files a supervisor (or the demo) starts as processes. From the
// installed package they are compiled JavaScript run by node; in this repository they are
// TypeScript, run through tsx. The consumer's entry is the service's own (its handlers):
// examples/payments/consumer-worker.ts is the example's.

export type WorkerName = 'relay' | 'consumer' | 'retention';

export interface WorkerEntry {
  /** Absolute path of the entry file. */
  file: string;
  /** Node flags to start it with (heap caps; the TypeScript loader when run from source). */
  nodeArgs: string[];
  /** Environment to add to the process's own (glibc's malloc arenas: workers/node-args.ts). */
  env: Record<string, string>;
}

/** How to start worker `name`: the bundled entry, or `file` (required for the consumer: a file of yours calling runConsumerWorker). */
export function workerEntry(name: WorkerName, file?: string): WorkerEntry {
  if (name === 'consumer' && file === undefined) throw new Error('the consumer worker runs your handlers: give the file of your entry, which calls runConsumerWorker');
  file ??= name === 'relay' ? require.resolve('./relay.worker') : require.resolve('./retention.worker');
  const loader = file.endsWith('.ts') ? ['--require', 'tsx/cjs'] : [];
  return { file, nodeArgs: [...WORKER_NODE_ARGS[name], ...loader], env: { ...WORKER_ENV } };
}
