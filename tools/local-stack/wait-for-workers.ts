import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/**
 * Waits until every task queue has a worker polling it. A worker needs seconds to bundle its
 * workflow code; traffic sent before then only queues up, which makes a demo look stalled.
 */
export async function waitForPollers(client: Client, taskQueues: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of taskQueues) {
    for (;;) {
      const { pollers } = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      if (pollers.length > 0) break;
      if (Date.now() > deadline) throw new Error(`no worker polled task queue ${name} within ${timeoutMs / 1000} s: see the worker logs`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
