import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Config } from '../src/config/env';
import fs from 'node:fs';
import { workflowSpanSinks } from '../src/observability/tracing';
import { bundleInChildProcess, prebuiltBundlePath } from './bundle-workflows';
import { temporalConnectionOptions } from '../src/temporal/connection-options';

/**
 * Workflows a worker keeps in its cache, which also bounds its concurrent workflow tasks. Set
 * here because the SDK's default is derived from the V8 heap limit, and the memory flags of
 * workers/node-args.ts bring the consumer's limit (198 MiB) to the SDK's floor of 10: ten
 * workflow-task slots, which the SDK's ten workflow-task pollers hold while they poll, leaving
 * none for an eagerly started workflow. Every applyEventsWorkflow then waited for a poll instead
 * of starting on the consumer's own worker, which nearly doubled the median round trip
 * (bench:consumer, docs/measurements/consumer-log.md, "Figures behind code comments"). What a worker here runs at
 * once stays far below it: the relay's shards, a few apply flights, a retention or audit run.
 */
export const WORKFLOW_CACHE_SIZE = 40;

export type WorkerParts = Pick<WorkerOptions, 'taskQueue' | 'activities'> & {
  workflowsPath: string;
  /** The process exports traces (WorkerTracing.exporting): its bundle carries the OpenTelemetry workflow interceptors. */
  traced: boolean;
} & Omit<Partial<WorkerOptions>, 'workflowsPath' | 'workflowBundle'>;

/**
 * Creates one worker on `connection` (the service's own; the caller keeps it), or on a connection
 * of its own to the configured server, which `close` closes; the caller runs the worker. Its
 * workflow code comes prebuilt with the installed package, or is bundled in a child process
 * (from source), which keeps the worker's memory small either way.
 */
export async function createTemporalWorker(
  config: Config,
  parts: WorkerParts,
  given?: NativeConnection,
): Promise<{ worker: Worker; connection: NativeConnection; close(): Promise<void> }> {
  const { workflowsPath, traced, ...options } = parts;
  const code = await workflowCode(config, workflowsPath, traced);
  const connection = given ?? (await NativeConnection.connect(temporalConnectionOptions(config)));
  const close = async () => {
    if (!given) await connection.close();
  };
  try {
    // A traced bundle's OpenTelemetry workflow interceptors (workers/workflow-interceptors.ts) send
    // their spans through this sink; `options` replaces it with the exporting one when tracing.
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      workflowBundle: { code },
      sinks: workflowSpanSinks(),
      maxCachedWorkflows: WORKFLOW_CACHE_SIZE,
      ...options,
    });
    return { worker, connection, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The workflow bundle's code: prebuilt with the installed package, else bundled in a child
 * process; with the OpenTelemetry workflow interceptors only when `traced` (the worker exports spans).
 */
export async function workflowCode(config: Config, workflowsPath: string, traced: boolean): Promise<string> {
  const prebuilt = prebuiltBundlePath(workflowsPath, traced);
  return prebuilt ? fs.readFileSync(prebuilt, 'utf8') : await bundleInChildProcess(config.cacheDir, workflowsPath, traced);
}
