import { context, propagation, trace } from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import type * as SdkTraceNode from '@opentelemetry/sdk-trace-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type * as ClientInterceptors from '@temporalio/interceptors-opentelemetry/lib/client';
import type * as WorkerInterceptors from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import { optionalModule, requiredModule } from './optional-module';
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
export function workflowSpanSinks(processor?: SpanProcessor, resource?: Resources.Resource): NonNullable<WorkerOptions['sinks']> {
  const interceptors = optionalModule<typeof WorkerInterceptors>(INTERCEPTORS_WORKER);
  // Without Temporal's OpenTelemetry interceptors no bundle of ours is traced, so nothing calls the sink.
  if (!interceptors) return {};
  const sdk = requiredModule<typeof SdkTraceBase>('@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-trace-base', 'the workflow span sink');
  const resources = requiredModule<typeof Resources>('@opentelemetry/resources', '@opentelemetry/resources', 'the workflow span sink');
  return { exporter: interceptors.makeWorkflowExporter(processor ?? new sdk.NoopSpanProcessor(), resource ?? new resources.Resource({ 'service.name': 'temporal-outbox' })) };
}

const INTERCEPTORS_PACKAGE = '@temporalio/interceptors-opentelemetry';
const INTERCEPTORS_WORKER = `${INTERCEPTORS_PACKAGE}/lib/worker`;

/** The SDK packages a process that exports spans loads; each names its package when it is missing. */
function exportingModules(needsExporter: boolean) {
  const purpose = 'exporting OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT set, or a span processor given)';
  return {
    sdk: requiredModule<typeof SdkTraceBase>('@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-trace-base', purpose),
    node: requiredModule<typeof SdkTraceNode>('@opentelemetry/sdk-trace-node', '@opentelemetry/sdk-trace-node', purpose),
    resources: requiredModule<typeof Resources>('@opentelemetry/resources', '@opentelemetry/resources', purpose),
    otlp: needsExporter ? requiredModule<typeof OtlpHttp>('@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/exporter-trace-otlp-http', purpose) : undefined,
    // Loaded here so that a missing package stops the worker before it polls, not at its first sink call.
    interceptors: requiredModule<typeof WorkerInterceptors>(INTERCEPTORS_WORKER, INTERCEPTORS_PACKAGE, purpose),
  };
}

// One provider per process, shared by the workers an application (or a test) runs in it.
let installed: { provider: SdkTraceNode.NodeTracerProvider; processor: SpanProcessor; users: number } | undefined;

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
  const exporting = spanProcessor !== undefined || config.tracing.otlpTracesUrl !== undefined;
  const otel = exporting ? exportingModules(spanProcessor === undefined) : undefined;
  const resource = otel ? new otel.resources.Resource({ 'service.name': serviceName }) : undefined;
  if (otel && installed === undefined) {
    const processor =
      spanProcessor ??
      // Batched: a span costs the hot path a push into a buffer, never a network round trip.
      new otel.sdk.BatchSpanProcessor(new otel.otlp!.OTLPTraceExporter({ url: config.tracing.otlpTracesUrl, headers: config.tracing.otlpHeaders }));
    const provider = new otel.node.NodeTracerProvider({
      resource,
      spanProcessors: [processor],
      sampler: new otel.sdk.ParentBasedSampler({ root: new otel.sdk.TraceIdRatioBasedSampler(config.tracing.sampleRatio) }),
    });
    provider.register();
    installed = { provider, processor, users: 0 };
    // The URL only: OTEL_EXPORTER_OTLP_HEADERS may hold credentials.
    logger.info({ otlpTraces: spanProcessor ? 'span processor given by the application' : config.tracing.otlpTracesUrl, serviceName }, 'exporting OpenTelemetry traces');
  }
  const mine = exporting ? installed : undefined;
  if (mine) mine.users += 1;
  // Installed but not exporting: activities and client calls still join the traces of a tracer
  // provider the application registered itself.
  const workerInterceptors = otel?.interceptors ?? optionalModule<typeof WorkerInterceptors>(INTERCEPTORS_WORKER);
  const clientInterceptors = optionalModule<typeof ClientInterceptors>(`${INTERCEPTORS_PACKAGE}/lib/client`);
  return {
    exporting,
    workerOptions: {
      interceptors: workerInterceptors
        ? { activity: [(ctx) => ({ inbound: new workerInterceptors.OpenTelemetryActivityInboundInterceptor(ctx), outbound: new workerInterceptors.OpenTelemetryActivityOutboundInterceptor(ctx) })] }
        : {},
      sinks: workflowSpanSinks(mine?.processor, resource),
    },
    clientInterceptors: { workflow: clientInterceptors ? [new clientInterceptors.OpenTelemetryWorkflowClientInterceptor()] : [] },
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
