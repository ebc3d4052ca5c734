import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import type { WorkerKind } from './worker-ports';

/** The Temporal parts of tracing a worker: activity interceptors and the sink workflow spans leave the sandbox through. */
export interface WorkerTracing {
  /** True when this process exports spans (OTLP configured, or a span processor given). */
  exporting: boolean;
  workerOptions: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** For a Client that starts workflows (the consumer): its start joins the caller's trace. */
  clientInterceptors: { workflow: WorkflowClientInterceptor[] };
  close(): Promise<void>;
}

/**
 * The sink workflow spans leave the sandbox through (every bundle of ours carries the workflow
 * interceptors that produce them); without a processor they are dropped.
 */
export function workflowSpanSinks(processor: SpanProcessor = new NoopSpanProcessor(), resource = new Resource({ 'service.name': 'temporal-outbox' })): NonNullable<WorkerOptions['sinks']> {
  return { exporter: makeWorkflowExporter(processor, resource) };
}

// One provider per process, shared by the workers an application (or a test) runs in it.
let installed: { provider: NodeTracerProvider; processor: SpanProcessor; users: number } | undefined;

/**
 * Tracing of one worker. With OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT set (or `spanProcessor` given:
 * an application embedding the worker with its own exporter), registers a tracer provider for the
 * process (W3C propagation, async-context tracking) that exports through it. Otherwise registers
 * nothing: spans then go to the provider the application registered, or nowhere at no cost.
 * Temporal's OpenTelemetry interceptors are on either way (the workflow bundles always include
 * the workflow side, workers/workflow-interceptors.ts), so workflows and activities join the
 * traces of whoever starts them.
 */
export function startTracing(config: Config, worker: WorkerKind, logger: Logger, spanProcessor?: SpanProcessor): WorkerTracing {
  const serviceName = config.tracing.serviceName ?? `temporal-outbox-${worker}`;
  const resource = new Resource({ 'service.name': serviceName });
  const exporting = spanProcessor !== undefined || config.tracing.otlpTracesUrl !== undefined;
  if (exporting && installed === undefined) {
    const processor =
      spanProcessor ??
      // Batched: a span costs the hot path a push into a buffer, never a network round trip.
      new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracing.otlpTracesUrl, headers: config.tracing.otlpHeaders }));
    const provider = new NodeTracerProvider({
      resource,
      spanProcessors: [processor],
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.tracing.sampleRatio) }),
    });
    provider.register();
    installed = { provider, processor, users: 0 };
    // The URL only: OTEL_EXPORTER_OTLP_HEADERS may hold credentials.
    logger.info({ otlpTraces: spanProcessor ? 'span processor given by the application' : config.tracing.otlpTracesUrl, serviceName }, 'exporting OpenTelemetry traces');
  }
  const mine = exporting ? installed : undefined;
  if (mine) mine.users += 1;
  return {
    exporting,
    workerOptions: {
      interceptors: {
        activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
      },
      sinks: workflowSpanSinks(mine?.processor, resource),
    },
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    async close() {
      if (!mine || --mine.users > 0) return;
      installed = undefined;
      // Flushes what is buffered, then leaves the process as it found it (a test runs many workers).
      await mine.provider.shutdown().catch((err: Error) => logger.warn({ err: err.message }, 'flushing traces failed'));
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
