// Workflow interceptor modules every workflow bundle of ours includes (bundleWorkflowCode's
// `workflowInterceptorModules`): Temporal's OpenTelemetry interceptors, so a workflow run and
// the activities it schedules are spans of the trace that started it. A bundle is built once and
// may run with tracing on or off; with it off the worker's sink drops the spans (observability/tracing.ts).
export const WORKFLOW_INTERCEPTOR_MODULES: string[] = [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];
