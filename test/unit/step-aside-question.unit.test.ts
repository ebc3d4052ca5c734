import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { keptConnectionProbe } from '../../workers/kept-connection-probe';
import { runSteppingAside, type SteppableWork } from '../../workers/step-aside';

// A worker asks "can another worker take over?" before it steps aside (a consumer: does the group
// have another member). That question must not stretch the step-aside bound
// (docs/guarantees.md#stepping-aside): it is asked while the link starts failing, each time within
// the probe timeout, and a question that never answers counts as yes.
const health = { intervalMs: 50, timeoutMs: 400, failures: 3, failingForMs: 500 };
const silent = () => new Promise<never>(() => undefined);

/** Runs the step-aside with a link that goes silent at once; returns when it stepped aside (ms from the start), or null. */
async function stepAsideAfter(othersCanTakeOver: () => Promise<boolean>, withinMs: number): Promise<number | null> {
  const stopped = new AbortController();
  const started = Date.now();
  let asideAt: number | null = null;
  let end: () => void = () => undefined;
  const work: SteppableWork = {
    run: () => new Promise<void>((resolve) => (end = resolve)),
    shutdown: async (stepAside) => {
      if (stepAside) asideAt ??= Date.now() - started;
      end();
    },
  };
  const running = runSteppingAside({ start: async () => work, probes: { link: silent }, health, logger: pino({ level: 'silent' }), othersCanTakeOver, stopped: stopped.signal });
  const deadline = Date.now() + withinMs;
  while (asideAt === null && Date.now() < deadline) await sleep(10);
  stopped.abort();
  await running;
  return asideAt;
}

describe('step-aside: asking whether another worker can take over', function () {
  this.timeout(20_000);
  // Without the question: the health check's own bound.
  let baseline: number;
  before(async () => {
    baseline = (await stepAsideAfter(async () => true, 5_000))!;
    assert.ok(baseline !== null);
  });

  it('a question that never answers (asked over the dead link) does not hold the step-aside', async () => {
    const at = await stepAsideAfter(silent, 5_000);
    assert.notEqual(at, null, 'stepped aside');
    assert.ok(at! < baseline + health.timeoutMs, `stepped aside at ${at} ms; without the question ${baseline} ms`);
  });

  it('a slow answer was asked ahead: the step-aside does not wait for it', async () => {
    const at = await stepAsideAfter(() => sleep(health.timeoutMs * 0.9).then(() => true), 5_000);
    assert.notEqual(at, null, 'stepped aside');
    assert.ok(at! < baseline + health.timeoutMs / 2, `stepped aside at ${at} ms; without the question ${baseline} ms`);
  });

  it('a worker alone stays', async () => {
    assert.equal(await stepAsideAfter(async () => false, 2_500), null);
  });
});

describe('a kept probe connection with a deadline', () => {
  it('discards a connection that did not answer in time and opens a new one for the next call', async () => {
    let opened = 0;
    const discarded: number[] = [];
    let hang = true;
    const ask = keptConnectionProbe<number, string>(
      {
        open: async () => ++opened,
        check: (c) => (hang ? silent() : Promise.resolve(`answer from ${c}`)),
        discard: (c) => void discarded.push(c),
        release: async () => undefined,
      },
      50,
    );
    const started = Date.now();
    await assert.rejects(ask(), /no answer within 50 ms/);
    assert.ok(Date.now() - started < 500);
    assert.deepEqual(discarded, [1], 'the silent connection discarded at the deadline');
    hang = false;
    assert.equal(await ask(), 'answer from 2');
    assert.equal(await ask(), 'answer from 2', 'an answering connection is kept');
    await ask.close();
  });
});
