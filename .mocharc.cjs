// Mocha's settings. On CI (CI set, as .ci/run and every CI service do) a forgotten `.only`
// fails the run instead of silently skipping every other test.
module.exports = {
  require: ['tsx/cjs', 'test/kit/local-stack-env.ts', 'test/kit/end-children-with-suite.ts', 'test/kit/quiet-runtime.ts', 'test/kit/template-databases-hook.ts'],
  extension: ['ts'],
  timeout: 120000,
  // MOCHA_TIMINGS_FILE=path: spec output plus each file's wall time, as JSON (tools/scripts/timing-reporter.cjs).
  reporter: process.env.MOCHA_TIMINGS_FILE ? './tools/scripts/timing-reporter.cjs' : 'spec',
  exit: true,
  forbidOnly: Boolean(process.env.CI),
};
