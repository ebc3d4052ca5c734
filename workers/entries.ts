import { WORKER_ENV, WORKER_NODE_ARGS } from './node-args';

// The three worker entry points as files a supervisor (or the demo) starts as processes. From
// the installed package they are compiled JavaScript run by node; in this repository they are
// TypeScript, run through tsx.

export type WorkerName = 'relay' | 'consumer' | 'retention';

export interface WorkerEntry {
  /** Absolute path of the entry file. */
  file: string;
  /** Node flags to start it with (heap caps; the TypeScript loader when run from source). */
  nodeArgs: string[];
  /** Environment to add to the process's own (glibc's malloc arenas: workers/node-args.ts). */
  env: Record<string, string>;
}

export function workerEntry(name: WorkerName): WorkerEntry {
  const file = {
    relay: () => require.resolve('./relay.worker'),
    consumer: () => require.resolve('./consumer.worker'),
    retention: () => require.resolve('./retention.worker'),
  }[name]();
  const loader = file.endsWith('.ts') ? ['--require', 'tsx/cjs'] : [];
  return { file, nodeArgs: [...WORKER_NODE_ARGS[name], ...loader], env: { ...WORKER_ENV } };
}
