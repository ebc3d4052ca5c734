import type * as vl from 'vega-lite';

interface RunSteps {
  mode: string;
  steps: { events: number; relayPollMs: number; fromBeginningPollMs: number }[];
}

/** The vacuum-horizon benchmark's chart: poll time per step, bounded and from the beginning, per run. */
export function vacuumHorizonChart(events: number, runs: RunSteps[]): vl.TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: `Poll on a drained shard while ${events.toLocaleString('en-US')} events flow (held = one REPEATABLE READ transaction open)`,
    data: {
      values: runs.flatMap((run) =>
        run.steps.flatMap((s) => [
          { events: s.events, series: `${run.mode}: the relay's poll (from its bound)`, ms: s.relayPollMs },
          { events: s.events, series: `${run.mode}: poll from the beginning (full scan)`, ms: s.fromBeginningPollMs },
        ]),
      ),
    },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'events', type: 'quantitative', title: 'events published so far' },
      y: { field: 'ms', type: 'quantitative', title: 'poll execution time (ms)' },
      color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'top', columns: 2, labelLimit: 400 } },
    },
    width: 700,
    height: 350,
  };
}
