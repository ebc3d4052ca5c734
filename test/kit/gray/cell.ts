import { setTimeout as sleep } from 'node:timers/promises';
import { RETENTION_WORKFLOW, type RetentionWorkflow } from '../../../workflows/retention/contract';
import type { FaultLink } from '../fault-proxy';
import { uniqueName } from '../ids';
import { Backlog } from './backlog';
import { BOUNDS, HEAL, cellName, type Cell } from './cells';
import type { GrayRig } from './rig';

const POLL_MS = 500;
// How long a cell keeps measuring past a bound, so a miss is reported with its figure.
const MEASURE_PAST_BOUND_MS = 60_000;
// How long traffic flows before a fault (at least).
const TRAFFIC_BEFORE_FAULT_MS = 3_000;
const STEP_ASIDE = 'a link failed its health check: stepping aside until it answers again';

export interface CellTiming {
  /** The fault stays at least this long (and at least until the takeover or its bound). */
  holdMs: number;
  /**
   * Before the fault, also wait for the backlog to be young (under 5 s). Default true; the soak
   * turns it off while another worker's fault is on (its backlog is that fault's to clear, within
   * that fault's own bound, which ends no later than this one's).
   */
  youngBacklog?: () => boolean;
  /** How long the cell waits for the pipeline to be in step before the fault (default 3 minutes). */
  settleMs?: number;
  /** How long a cell keeps measuring past a bound (default 60 s). */
  measurePastBoundMs?: number;
  /** Told when the fault is on, and when it is healed. */
  onFault?: () => void;
  onHealed?: () => void;
}

export interface CellResult {
  cell: string;
  kind: Cell['kind'];
  service: Cell['service'];
  fault: Cell['fault'];
  heal: 'dead' | 'alive';
  startedAt: string;
  /** From the fault until every event committed before it was applied; null: not within the measuring time. */
  takeoverMs: number | null;
  /** The oldest unapplied event's largest age seen from the fault until the rejoin. */
  worstDelayMs: number;
  /** The faulty worker stepped aside (a relay or consumer whose health check failed). */
  steppedAside: boolean;
  /** From the fault until the faulty worker logged its step-aside (null: it did not). */
  stepAsideMs: number | null;
  /** Relay cells: from the fault until no shard ran on the faulty worker (null: never while faulted). */
  movedMs: number | null;
  /**
   * From the heal until the faulty worker holds work again (relay: a shard; consumer: partitions;
   * retention: a run completed); 0 when it never let go of its work; null: not within the measuring time.
   */
  rejoinMs: number | null;
  heldMs: number;
  /** The bounds this cell missed, in words; empty when it held them all. */
  missed: string[];
  /** When a bound was missed: the faulty worker's last log messages since the fault, to see why. */
  workerLog?: string[];
}

/**
 * One cell of the matrix on a running rig: waits for the pipeline to be in step, breaks the
 * faulty worker's link to one service, measures the takeover (every event committed before the
 * fault applied) and the worst delay, heals after the hold, and measures the rejoin. Lost,
 * double-applied and order are checked by the rig's checkpoint (verify.ts), over everything so far.
 */
export async function runCell(rig: GrayRig, cell: Cell, timing: CellTiming, log: (m: string) => void = () => undefined): Promise<CellResult> {
  const backlog = new Backlog(rig.db.pool);
  const worker = rig.faulty(cell.kind);
  const link = rig.links.get(cell.kind)![cell.service];
  await inStep(rig, backlog, cell, timing.youngBacklog ?? (() => true), timing.settleMs ?? 180_000);
  const measurePast = timing.measurePastBoundMs ?? MEASURE_PAST_BOUND_MS;
  const lastId = await backlog.newestId();
  timing.onFault?.();
  await inject(link, cell.fault);
  const faultAt = Date.now();
  const startedAt = new Date(faultAt).toISOString();
  log(`${cellName(cell)}: fault injected`);
  let worstDelayMs = 0;
  const sample = async () => {
    const oldest = await backlog.oldestUnapplied().catch(() => undefined);
    worstDelayMs = Math.max(worstDelayMs, oldest?.ageMs ?? 0);
    return oldest;
  };
  const takeoverBound = BOUNDS.takeoverMs + BOUNDS.batchMs;
  let takeoverMs: number | null = null;
  let movedMs: number | null = null;
  // Moved: every shard's holder known, none the faulty worker (a status query that did not answer
  // in time says nothing either way).
  const watchMoved = async () => {
    if (cell.kind !== 'relay' || movedMs !== null) return;
    const holders = await rig.shardHolders();
    if (holders.every((pid) => Number.isFinite(pid)) && !holders.includes(rig.relays.a.child.pid!)) movedMs = Date.now() - faultAt;
  };
  while (Date.now() - faultAt < takeoverBound + measurePast) {
    await watchMoved();
    const oldest = await sample();
    if (!oldest || oldest.id > lastId) {
      takeoverMs = Date.now() - faultAt;
      break;
    }
    await sleep(POLL_MS);
  }
  while (Date.now() - faultAt < timing.holdMs) {
    await watchMoved();
    await sample();
    await sleep(POLL_MS);
  }
  const stepAsideLine = cell.kind === 'retention' ? undefined : worker.lines().find((l) => l.includes(STEP_ASIDE) && logTime(l) >= faultAt);
  const steppedAside = stepAsideLine !== undefined;
  const stepAsideMs = stepAsideLine === undefined ? null : logTime(stepAsideLine) - faultAt;
  const holdsWorkBeforeHeal = await holdsWork(rig, cell);
  await link.heal({ oldConnections: HEAL[cell.fault] });
  timing.onHealed?.();
  const healAt = Date.now();
  const heldMs = healAt - faultAt;
  log(`${cellName(cell)}: healed after ${heldMs} ms (takeover ${takeoverMs ?? 'not measured'} ms, stepped aside at ${stepAsideMs ?? '-'} ms, shards off it at ${movedMs ?? '-'} ms)`);
  const rejoinBound = cell.kind === 'retention' ? BOUNDS.retentionResumeMs : BOUNDS.rejoinMs;
  let rejoinMs: number | null = null;
  if (cell.kind === 'retention') {
    rejoinMs = await retentionRunCompletes(rig, rejoinBound + measurePast, sample);
  } else if (holdsWorkBeforeHeal && !steppedAside) {
    rejoinMs = 0;
  } else {
    while (Date.now() - healAt < rejoinBound + measurePast) {
      await sample();
      if (await holdsWork(rig, cell, healAt)) {
        rejoinMs = Date.now() - healAt;
        break;
      }
      await sleep(POLL_MS);
    }
  }
  const missed: string[] = [];
  if (takeoverMs === null || takeoverMs > takeoverBound) missed.push(`takeover ${takeoverMs ?? `> ${takeoverBound + measurePast}`} ms (bound ${takeoverBound} ms)`);
  if (rejoinMs === null || rejoinMs > rejoinBound) missed.push(`rejoin ${rejoinMs ?? `> ${rejoinBound + measurePast}`} ms (bound ${rejoinBound} ms)`);
  log(`${cellName(cell)}: rejoin ${rejoinMs ?? 'not measured'} ms, worst delay ${worstDelayMs} ms${missed.length ? `; MISSED ${missed.join(', ')}` : ''}`);
  const workerLog = missed.length === 0 ? undefined : worker.lines().filter((l) => logTime(l) >= faultAt && !l.includes('sdkComponent') && !l.includes('batch applied')).slice(-20).map((l) => `${logTime(l) - faultAt} ms: ${/"msg":"([^"]*)"/.exec(l)?.[1] ?? l.slice(0, 200)}${startTimes(l)}`);
  return { cell: cellName(cell), ...cell, heal: HEAL[cell.fault], startedAt, takeoverMs, worstDelayMs, steppedAside, stepAsideMs, movedMs, rejoinMs, heldMs, missed, ...(workerLog ? { workerLog } : {}) };
}

function inject(link: FaultLink, fault: Cell['fault']) {
  switch (fault) {
    case 'black-hole':
      return link.blackHole();
    case 'reset':
      return link.reset();
    case 'latency':
      return link.latency({ ms: 200, jitterMs: 20, direction: 'downstream' });
    case 'one-way':
      return link.blackHole({ direction: 'upstream' });
  }
}

/**
 * Before a fault: traffic flowing, the backlog young (under 5 s, when `youngBacklog()` asks for it) and the faulty
 * worker holding work, so the cell measures a takeover of real work. Waits at most `settleMs` (a
 * previous cell's rejoin settling).
 */
async function inStep(rig: GrayRig, backlog: Backlog, cell: Cell, youngBacklog: () => boolean, settleMs: number) {
  const deadline = Date.now() + settleMs;
  // Traffic flowing for a while (it pauses for a checkpoint between cells), so the fault finds
  // events in flight on the faulty worker: with none, every event committed before the fault is
  // already applied, and the takeover measures nothing.
  const newest = await backlog.newestId();
  while (Date.now() < deadline && (await backlog.newestId()) <= newest) await sleep(POLL_MS);
  await sleep(TRAFFIC_BEFORE_FAULT_MS);
  while (Date.now() < deadline) {
    const young = !youngBacklog() || ((await backlog.oldestUnapplied().catch(() => undefined))?.ageMs ?? 0) < 5_000;
    if (young && (cell.kind === 'retention' || (await holdsWork(rig, cell)))) return;
    await sleep(POLL_MS);
  }
  throw new Error(`${cellName(cell)}: the pipeline did not settle within ${Math.round(settleMs / 1000)} s before the fault`);
}

/** The faulty worker holds work: a relay a shard, a consumer partitions (joined after `since`, when given). */
async function holdsWork(rig: GrayRig, cell: Cell, since = 0): Promise<boolean> {
  if (cell.kind === 'relay') return (await rig.shardHolders()).includes(rig.relays.a.child.pid!);
  if (cell.kind === 'consumer') {
    const logs = rig.consumers.a.logs;
    const joins = logs.filter((l) => l.msg === 'joined consumer group');
    const last = joins[joins.length - 1];
    if (!last || (last.time as number) < since) return false;
    const asideAfter = logs.some((l) => l.msg === STEP_ASIDE && (l.time as number) > (last.time as number));
    const assignment = Object.values((last.assignment ?? {}) as Record<string, number[]>).flat();
    return !asideAfter && assignment.length > 0;
  }
  return true;
}

/** Starts a retention run and returns how long until it completed (null: not within `withinMs`). */
async function retentionRunCompletes(rig: GrayRig, withinMs: number, whileWaiting: () => Promise<unknown>): Promise<number | null> {
  const started = Date.now();
  const handle = await rig.temporal.client.workflow.start<RetentionWorkflow>(RETENTION_WORKFLOW, { taskQueue: rig.names.retentionQueue, workflowId: uniqueName('gray-retention'), args: [] });
  let done = false;
  let succeeded = false;
  const result = handle.result().then(
    () => (done = succeeded = true),
    () => (done = true),
  );
  while (!done && Date.now() - started < withinMs) {
    await whileWaiting();
    await sleep(POLL_MS);
  }
  if (!done) {
    await handle.terminate('gray cell: not completed within its measuring time').catch(() => undefined);
    await result;
  }
  return succeeded ? Date.now() - started : null;
}

/** A relay membership's start figures (workers/relay.worker.ts), where the line has them: what a slow rejoin spent. */
function startTimes(line: string): string {
  const started = /"startedInMs":(\d+)/.exec(line)?.[1];
  const links = /"linksInMs":(\d+)/.exec(line)?.[1];
  return started === undefined ? '' : ` (started in ${started} ms, its links in ${links ?? '?'} ms)`;
}

function logTime(line: string): number {
  const match = /"time":(\d+)/.exec(line);
  return match ? Number(match[1]) : 0;
}
