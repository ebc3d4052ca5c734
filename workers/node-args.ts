/**
 * Node flags each worker process runs with; `npm run worker:*`, docker-compose.yml and the demo
 * use the same. The heap caps hold each worker at about the BRIEF's 300 MB RSS at full load
 * (280–314 MiB measured: docs/relay.md, docs/consumer.md); without them V8 on a large machine lets
 * the heap grow lazily to 400–640 MiB. Each isolate gets the cap:
 * the SDK's workflow thread has its own heap beside the main thread's.
 */
export const WORKER_NODE_ARGS = {
  relay: ['--max-old-space-size=256'],
  consumer: ['--max-old-space-size=192'],
  retention: [] as string[],
} as const;
