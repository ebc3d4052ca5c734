import assert from 'node:assert/strict';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { DeterminismViolationError } from '@temporalio/workflow';
import fs from 'node:fs';
import path from 'node:path';
import { APPLY_EVENTS_WORKFLOW } from '../../workflows/inbox/contract';
import { RELAY_SHARD_WORKFLOW } from '../../workflows/relay/contract';
import { RETENTION_WORKFLOW } from '../../workflows/retention/contract';
import { PRODUCTION_WORKFLOWS_PATH, readRecordedHistories, RETIRED_WORKFLOW_TYPES, type History, type RecordedHistory } from '../kit/workflow-histories';
import { PROJECT_ROOT } from '../../src/config/env';
import { workflowSpanSinks } from '../../src/observability/tracing';
import { workflowInterceptorModules } from '../../workers/workflow-interceptors';

// Upgrades must not stall running workflows: every history recorded from a release
// (test/histories/<release>/, `npm run histories:record`) must replay on the workflow code of
// this commit. A change that would make a running relay shard, credit or retention run fail its
// workflow task after a deploy fails here instead; the fix is patched() (docs/upgrading.md).
// No server needed: the replayer runs the bundled workflow code against the recorded events.

const quietBundlerLogger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

/**
 * Replays every history on one replay worker (much faster than a worker per history) and
 * returns each one's error, keyed by the id it was given (undefined: replayed cleanly).
 */
async function replayAll(bundle: WorkflowBundleWithSourceMap, histories: { id: string; history: History }[]): Promise<Map<string, Error | undefined>> {
  const results = new Map<string, Error | undefined>();
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle, sinks: workflowSpanSinks() }, histories.map((h) => ({ workflowId: h.id, history: h.history })))) {
    results.set(r.workflowId, r.error);
  }
  assert.equal(results.size, histories.length, 'every history got a replay result');
  return results;
}

/** The same history under another workflow type, to replay it with a variant of the workflow. */
function asWorkflowType(history: History, workflowType: string): History {
  const copy = structuredClone(history);
  copy.events![0]!.workflowExecutionStartedEventAttributes!.workflowType!.name = workflowType;
  return copy;
}

describe('recorded workflow histories replay on the current workflow code', function () {
  // Bundling the workflow code (webpack) is most of this file's time: a few seconds per bundle.
  this.timeout(180_000);
  const recorded = readRecordedHistories();
  const isRetired = (h: RecordedHistory) => Object.hasOwn(RETIRED_WORKFLOW_TYPES, h.workflowType);
  // A retired type's runs cannot replay (its code is gone); operators drain them before upgrading.
  const histories = recorded.filter((h) => !isRetired(h));
  const idOf = (h: RecordedHistory) => `${h.release}/${h.name}`;
  let replayed: Map<string, Error | undefined>;
  let production: WorkflowBundleWithSourceMap;
  before(async () => {
    // Both production bundles: a worker that exports traces carries Temporal's OpenTelemetry
    // workflow interceptors, one that does not leaves them out (workers/workflow-interceptors.ts),
    // and a run may move between the two kinds of worker. A history fails if either variant fails.
    replayed = new Map();
    for (const traced of [false, true]) {
      production = await bundleWorkflowCode({ workflowsPath: PRODUCTION_WORKFLOWS_PATH, workflowInterceptorModules: workflowInterceptorModules(traced), logger: quietBundlerLogger });
      for (const [id, error] of await replayAll(production, histories.map((h) => ({ id: idOf(h), history: h.history })))) {
        if (!replayed.get(id)) replayed.set(id, error && new Error(`${traced ? 'traced' : 'untraced'} bundle: ${error.message}`));
      }
    }
  });

  it('has recorded runs of every production workflow, through the relay loop’s paths', () => {
    const types = new Set(histories.map((h) => h.workflowType));
    for (const type of [RELAY_SHARD_WORKFLOW, APPLY_EVENTS_WORKFLOW, RETENTION_WORKFLOW]) assert.ok(types.has(type), `no recorded history of ${type}`);
    const relayEvents = new Set(histories.filter((h) => h.workflowType === RELAY_SHARD_WORKFLOW).flatMap((h) => h.history.events!.map((e) => e.eventType)));
    const { EventType } = temporal.api.enums.v1;
    // Batches (local-activity markers), idle waits (activities), back-off (timer), stop (signal) cancelling an idle wait, continue-as-new.
    for (const type of ['EVENT_TYPE_MARKER_RECORDED', 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED', 'EVENT_TYPE_TIMER_FIRED', 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED', 'EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED', 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW'] as const) {
      assert.ok(relayEvents.has(EventType[type]), `the recorded relay runs never reach ${type}`);
    }
  });

  it('has recorded relay runs in session mode, the default: sessions scheduled, continued as new, stopped', () => {
    const sessionRuns = histories.filter((h) => h.workflowType === RELAY_SHARD_WORKFLOW && h.history.events!.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'relayShardSession'));
    const { EventType } = temporal.api.enums.v1;
    const events = new Set(sessionRuns.flatMap((h) => h.history.events!.map((e) => e.eventType)));
    for (const type of ['EVENT_TYPE_ACTIVITY_TASK_COMPLETED', 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED', 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW'] as const) {
      assert.ok(events.has(EventType[type]), `the recorded session-mode relay runs never reach ${type} (npm run histories:record records them)`);
    }
  });

  for (const recorded of histories) {
    it(`${idOf(recorded)} (${recorded.workflowType}) replays`, () => {
      const error = replayed.get(idOf(recorded));
      assert.equal(error, undefined, `${idOf(recorded)} does not replay on this code: ${error?.message}. A running workflow of that release would stall; guard the change with patched() (docs/upgrading.md).`);
    });
  }

  describe('retired workflow types (recorded by an older release, removed since)', () => {
    const upgrading = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'upgrading.md'), 'utf8');
    for (const [type, { removedIn }] of Object.entries(RETIRED_WORKFLOW_TYPES)) {
      it(`${type} (removed in ${removedIn}) is gone from the bundle and docs/upgrading.md says how to drain its runs`, () => {
        assert.ok(recorded.some((h) => h.workflowType === type), `no recorded history of ${type}: drop it from RETIRED_WORKFLOW_TYPES`);
        assert.ok(!new RegExp(`\\b${type}\\b`).test(production.code), `${type} is still in the production workflow bundle: it is not retired`);
        assert.ok(upgrading.includes(`\`${type}\``) && upgrading.includes(removedIn), `docs/upgrading.md must name ${type} and ${removedIn}`);
      });
    }
  });

  describe('catches what it must (a change to the relay on the recorded relay runs)', () => {
    let relayRuns: RecordedHistory[];
    let unpatched: Map<string, Error | undefined>;
    let patchedChange: Map<string, Error | undefined>;
    before(async () => {
      const changes = await bundleWorkflowCode({ workflowsPath: require.resolve('../fixtures/relay-workflow-changes'), logger: quietBundlerLogger });
      relayRuns = histories.filter((h) => h.workflowType === RELAY_SHARD_WORKFLOW);
      assert.ok(relayRuns.length > 0);
      unpatched = await replayAll(changes, relayRuns.map((h) => ({ id: idOf(h), history: asWorkflowType(h.history, 'relayWithUnpatchedChange') })));
      patchedChange = await replayAll(changes, relayRuns.map((h) => ({ id: idOf(h), history: asWorkflowType(h.history, 'relayWithPatchedChange') })));
    });

    it('a new step added without patched() fails replay with a nondeterminism error', () => {
      for (const run of relayRuns) assert.ok(unpatched.get(idOf(run)) instanceof DeterminismViolationError, `${idOf(run)} must not replay on the unpatched change (got ${String(unpatched.get(idOf(run)))})`);
    });

    it('the same step behind patched() replays', () => {
      for (const run of relayRuns) assert.equal(patchedChange.get(idOf(run)), undefined, `${idOf(run)}: ${patchedChange.get(idOf(run))?.message}`);
    });
  });
});
