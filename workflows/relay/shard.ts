import { ApplicationFailure } from '@temporalio/common';
import { patched } from '@temporalio/workflow';
import { RELAY_FAILURES, RELAY_SESSIONS_PATCH, type RelayActivityMode, type RelayShardInput } from './contract';
import { relayByLocalActivities } from './local-loop';
import { handleOperatorRequests } from './operator-handlers';
import { relayBySessions } from './session-loop';
import { startShardRun } from './shard-run';
import type { RelayCounters } from './status';

/**
 * One shard of the outbox relay, forever: fetch pending ids → publish → mark published.
 * Fixed workflow id per shard (src/config/constants relayWorkflowId), so Temporal itself refuses a
 * second relay for the same shard; the layout check refuses relays of another shard count.
 */
export async function relayShardWorkflow(input: RelayShardInput): Promise<RelayCounters> {
  const run = startShardRun(input);
  handleOperatorRequests(run);
  run.report('running', true);
  const mode: RelayActivityMode = input.activityMode ?? (patched(RELAY_SESSIONS_PATCH) ? 'session' : 'local');
  if (mode !== 'session' && mode !== 'local') {
    // 'remote' (removed in 0.2, benchmark-only) or a typo from a hand-written start: refuse at once
    // rather than run a mode nobody chose (docs/upgrading.md).
    throw ApplicationFailure.create({ type: RELAY_FAILURES.unknownActivityMode, nonRetryable: true, message: `unknown relay activityMode ${JSON.stringify(mode)}: use 'session' (the default) or 'local'` });
  }
  if (mode === 'session') await relayBySessions(run);
  else await relayByLocalActivities(run);
  run.report('stopped', true);
  return run.counters;
}
