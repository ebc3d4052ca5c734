import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPrometheus, stopPrometheus, type ScrapeTarget } from '../../tools/local-stack/prometheus';

/** A Prometheus of its own for one test (own folder, port and targets); `stop` removes it. */
export async function startTestPrometheus(port: number, targets: ScrapeTarget[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-prometheus-'));
  await startPrometheus({ dir, port, targets, scrapeIntervalS: 1 });
  const api = `http://127.0.0.1:${port}/api/v1`;
  return {
    /** Instant query; the result vector as (labels, value) pairs. */
    async query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]> {
      const res = await fetch(`${api}/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; error?: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success') throw new Error(`PromQL ${promql}: ${body.error}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async rules(): Promise<string[]> {
      const body = (await (await fetch(`${api}/rules`)).json()) as { data: { groups: { rules: { name: string }[] }[] } };
      return body.data.groups.flatMap((g) => g.rules.map((r) => r.name));
    },
    async stop() {
      await stopPrometheus(dir);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type TestPrometheus = Awaited<ReturnType<typeof startTestPrometheus>>;
