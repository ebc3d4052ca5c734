import type { Client } from '@temporalio/client';

// Where one relay shard's time went, read back from its workflow history: for ordinary
// activities the queue time (scheduled → started) and run time (started → completed); for local
// activities, recorded as markers, the step time: from the previous step's completion to this
// one's (the loop is sequential, so that is the call plus the workflow's own turn-around; with
// the mark overlapped, a mark's step is measured from its publish). And how many history
// events and workflow tasks each batch cost.

type Timestamp = { seconds?: { toNumber(): number } | number | string | null; nanos?: number | null } | null | undefined;

const ms = (t: Timestamp) => {
  if (!t) return 0;
  const s = typeof t.seconds === 'object' && t.seconds !== null ? t.seconds.toNumber() : Number(t.seconds ?? 0);
  return s * 1000 + (t.nanos ?? 0) / 1e6;
};

interface MarkerData {
  activity_type?: string;
  complete_time?: { seconds: number; nanos: number };
}

function markerData(details: Record<string, { payloads?: { data?: Uint8Array | null }[] | null }> | null | undefined): MarkerData | undefined {
  const raw = details?.data?.payloads?.[0]?.data;
  if (!raw) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(raw)) as MarkerData;
  } catch {
    return undefined;
  }
}

export async function profileRelayHistory(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, { type: string; at: number }>();
  const started = new Map<string, number>();
  const sums: Record<string, { kind: 'remote' | 'local'; n: number; queueMs: number; runMs: number }> = {};
  const workers = new Set<string>();
  let workflowTasks = 0;
  let batches = 0;
  /** Completion time of the previous step of the loop, for local activities' step times. */
  let previousStepAt: number | undefined;
  let lastPublishAt: number | undefined;
  for (const e of history.events ?? []) {
    const at = ms(e.eventTime as Timestamp);
    const id = String(e.eventId);
    if (e.workflowTaskStartedEventAttributes) {
      workflowTasks += 1;
      if (e.workflowTaskStartedEventAttributes.identity) workers.add(e.workflowTaskStartedEventAttributes.identity);
    }
    if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
    if (e.activityTaskStartedEventAttributes) started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), at);
    if (e.activityTaskCompletedEventAttributes) {
      const sid = String(e.activityTaskCompletedEventAttributes.scheduledEventId);
      const s = scheduled.get(sid);
      if (!s) continue;
      const st = started.get(sid) ?? at;
      const acc = (sums[s.type] ??= { kind: 'remote', n: 0, queueMs: 0, runMs: 0 });
      acc.n += 1;
      acc.queueMs += st - s.at;
      acc.runMs += at - st;
      if (s.type === 'publishBatch') batches += 1;
      previousStepAt = at;
    }
    if (e.markerRecordedEventAttributes) {
      const d = markerData(e.markerRecordedEventAttributes.details as Parameters<typeof markerData>[0]);
      if (!d?.activity_type || !d.complete_time) continue;
      const completed = ms(d.complete_time);
      const from = d.activity_type === 'markPublished' ? lastPublishAt : previousStepAt;
      if (d.activity_type === 'publishBatch') {
        batches += 1;
        lastPublishAt = completed;
      }
      if (d.activity_type !== 'markPublished') previousStepAt = completed;
      if (from === undefined) continue;
      const acc = (sums[d.activity_type] ??= { kind: 'local', n: 0, queueMs: 0, runMs: 0 });
      acc.n += 1;
      acc.runMs += completed - from;
    }
  }
  const events = history.events?.length ?? 0;
  return {
    historyEvents: events,
    workflowTasks,
    batches,
    historyEventsPerBatch: batches > 0 ? +(events / batches).toFixed(1) : null,
    /** Worker identities (pid@host) that ran this shard's workflow tasks. */
    workers: [...workers],
    activities: Object.fromEntries(
      Object.entries(sums).map(([type, s]) => [
        type,
        { kind: s.kind, count: s.n, ...(s.kind === 'remote' ? { avgQueueMs: +(s.queueMs / s.n).toFixed(1) } : {}), avgRunMs: +(s.runMs / s.n).toFixed(1) },
      ]),
    ),
  };
}
