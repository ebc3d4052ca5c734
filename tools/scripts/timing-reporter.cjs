// Mocha reporter: mocha's spec output, plus each test file's wall time (its hooks included) and its
// pass/fail/pending counts written as JSON to MOCHA_TIMINGS_FILE, rewritten after each file so an
// interrupted run keeps what it measured. .mocharc.cjs
// picks it when that variable is set; docs/measurements/ci-timings.md is built from its output.
// Plain CommonJS so mocha can load it before any TypeScript loader is registered.
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_RUN_END } =
  Mocha.Runner.constants;

class TimingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const files = new Map();
    const entry = (file) => {
      const key = path.relative(process.cwd(), file ?? '(no file)');
      let e = files.get(key);
      if (!e) {
        e = { file: key, start: Date.now(), end: Date.now(), passes: 0, failures: 0, pending: 0, slowest: [] };
        files.set(key, e);
      }
      return e;
    };
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file) entry(suite.file);
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      if (!suite.file) return;
      entry(suite.file).end = Date.now();
      if (suite.parent && suite.parent.root) write(false);
    });
    const test = (kind) => (t) => {
      const e = entry(t.file);
      e[kind] += 1;
      e.end = Date.now();
      if (typeof t.duration === 'number') e.slowest.push({ title: t.fullTitle(), ms: t.duration });
    };
    runner.on(EVENT_TEST_PASS, test('passes'));
    runner.on(EVENT_TEST_FAIL, test('failures'));
    runner.on(EVENT_TEST_PENDING, test('pending'));
    const write = (complete) => {
      const out = process.env.MOCHA_TIMINGS_FILE;
      if (!out) return;
      const rows = [...files.values()]
        .map((e) => ({
          file: e.file,
          seconds: Math.round((e.end - e.start) / 100) / 10,
          passes: e.passes,
          failures: e.failures,
          pending: e.pending,
          slowest: [...e.slowest].sort((x, y) => y.ms - x.ms).slice(0, 3),
        }))
        .sort((x, y) => y.seconds - x.seconds);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, `${JSON.stringify({ node: process.version, complete, stats: runner.stats ?? {}, files: rows }, null, 2)}\n`);
    };
    runner.once(EVENT_RUN_END, () => write(true));
  }
}

module.exports = TimingReporter;
