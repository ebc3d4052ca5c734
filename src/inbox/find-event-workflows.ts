import type { Client } from '@temporalio/client';
import type { SqlExecutor } from '../db/executor';
import type { EventBatch } from '../../workflows/inbox/contract';
import { applyWorkflowsQuery } from './apply-search-attributes';
import { findAppliedEvent } from './find-applied-event';

export interface WorkflowsOfEvent {
  eventId: string;
  consumer: string;
  appliedAt: Date;
  topic: string;
  partition: number;
  offset: number;
  /** The visibility query to paste into the UI's workflow list (or `temporal workflow list --query`). */
  query: string;
  /** Workflows the query lists, and whether each one's input holds the event (exactly the ones that applied it, or saw it again as a duplicate). */
  workflows: { workflowId: string; runId: string; holdsEvent: boolean }[];
}

/**
 * From an event id to the applyEventsWorkflow runs (ids `apply-…`) that carried it: each
 * consumer's inbox row says where the event sat on the topic (a row written before the inbox
 * recorded positions is left out), the search attributes narrow the list to a few runs, and each
 * candidate's input (its first history event, an EventBatch: is the id among its
 * eventIds?) confirms it. Closed workflows are kept for the namespace's retention only (24 h on
 * the dev server).
 */
export async function findEventWorkflows(db: SqlExecutor, client: Client, eventId: string): Promise<WorkflowsOfEvent[]> {
  const out: WorkflowsOfEvent[] = [];
  for (const applied of await findAppliedEvent(db, eventId)) {
    const { consumer, appliedAt, topic, partition, offset } = applied;
    if (topic === null || partition === null || offset === null) continue;
    const query = applyWorkflowsQuery(consumer, topic, partition, offset);
    const workflows: WorkflowsOfEvent['workflows'] = [];
    for await (const w of client.workflow.list({ query })) {
      const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      const payload = started?.input?.payloads?.[0];
      const batch = payload ? (client.options.loadedDataConverter.payloadConverter.fromPayload(payload) as EventBatch) : undefined;
      workflows.push({ workflowId: w.workflowId, runId: w.runId, holdsEvent: batch?.eventIds.includes(eventId) ?? false });
    }
    out.push({ eventId, consumer, appliedAt, topic, partition, offset, query, workflows });
  }
  return out;
}
