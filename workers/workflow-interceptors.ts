// Workflow interceptor modules a workflow bundle of ours includes (bundleWorkflowCode's
// `workflowInterceptorModules`): Temporal's OpenTelemetry interceptors, so a workflow run and the
// activities it schedules are spans of the trace that started it — but only in the bundle of a
// worker that exports spans (OTLP configured, or a span processor given: src/observability/tracing.ts).
// A worker that exports nothing would only make those spans to drop them at the sink, and the
// interceptors double the bundle (with its inline source map) that the worker holds in its main
// thread and compiles into its workflow thread, which shows in an idle worker's RSS
// (docs/measurements/relay-log.md, "Figures behind code comments"). The two
// variants are different bundles (different cache keys, `.traced` prebuilt files); both replay the
// same histories, since the interceptors add no commands (test/unit/workflow-replay.unit.test.ts).
// Resolved only for a traced bundle: the interceptors package is an optional peer dependency, which
// a service that exports no traces need not install (src/observability/optional-module.ts).
const OPENTELEMETRY_WORKFLOW_INTERCEPTORS = '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';

/** The interceptor modules of a bundle for a worker that exports traces (`traced`) or not. */
export function workflowInterceptorModules(traced: boolean): string[] {
  return traced ? [require.resolve(OPENTELEMETRY_WORKFLOW_INTERCEPTORS)] : [];
}
