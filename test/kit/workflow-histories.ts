import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { PROJECT_ROOT } from '../../src/config/env';

// Workflow histories recorded from real runs of each release (tools/scripts/record-histories.ts),
// replayed against the current workflow code by test/unit/workflow-replay.unit.test.ts: a change
// that would make a running workflow of that release fail on replay fails the build instead.

export type History = temporal.api.history.v1.IHistory;

/** test/histories/<release>/<name>.json, one folder per release whose workflows may still be running. */
export const HISTORIES_DIR = path.join(PROJECT_ROOT, 'test', 'histories');

/** Every workflow the production workers bundle, in one module for the replayer. */
export const PRODUCTION_WORKFLOWS_PATH = require.resolve('../fixtures/production-workflows');

/**
 * Workflow types a release removed, with the release that removed them. Their recorded histories
 * stay under test/histories (what an older release ran), but no longer replay: the replay test
 * checks instead that each one is really gone from the bundle and that docs/upgrading.md tells
 * operators what to do with runs still open when they upgrade.
 */
export const RETIRED_WORKFLOW_TYPES: Record<string, { removedIn: string }> = {
  // The seed's one-event-per-workflow credit: used by one test only; applyEventsWorkflow does its work.
  applyCreditWorkflow: { removedIn: 'v0.2.0' },
};

export interface RecordedHistory {
  release: string;
  name: string;
  workflowType: string;
  history: History;
}

/** The folder name for the release in package.json: `v<version>`. */
export function currentRelease(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  return `v${pkg.version}`;
}

export function workflowTypeOf(history: History): string {
  const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
  if (!type) throw new Error('not a workflow history: its first event is not WorkflowExecutionStarted');
  return type;
}

export function readRecordedHistories(dir = HISTORIES_DIR): RecordedHistory[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((release) =>
      fs
        .readdirSync(path.join(dir, release.name))
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((file) => {
          const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, release.name, file), 'utf8')));
          return { release: release.name, name: path.basename(file, '.json'), workflowType: workflowTypeOf(history), history };
        }),
    );
}

/** Writes one history as the Temporal CLI's `workflow show --output json` would (proto JSON). */
export function writeRecordedHistory(release: string, name: string, history: History, dir = HISTORIES_DIR): string {
  const file = path.join(dir, release, `${name}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history as temporal.api.history.v1.History)), null, 1)}\n`);
  return file;
}
