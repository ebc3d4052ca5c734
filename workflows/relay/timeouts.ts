// Shared by the relay workflow (its continue-as-new) and the code that starts relays; no
// imports, so both workflow and Node code may use it.

/**
 * Workflow task timeout of a relay shard. In local-activity mode a workflow task stays open
 * while fetch → publish → mark follow each other, and the worker completes it ("heartbeats" it)
 * at 80 % of this timeout, recording the markers gathered so far. So this bounds how long a
 * query or a stop signal waits for that task (~4 s), how much marker data one completion
 * carries, and how soon a killed worker's shard moves to another worker (the task times out).
 * Long enough for a replay on a busy 2-core machine; Temporal's default is 10 s.
 */
export const RELAY_WORKFLOW_TASK_TIMEOUT = '5 seconds';
