// Mocha's settings. On CI (CI set, as .ci/run and every CI service do) a forgotten `.only`
// fails the run instead of silently skipping every other test.
module.exports = {
  require: ['tsx/cjs', 'test/kit/local-stack-env.ts', 'test/kit/quiet-runtime.ts'],
  extension: ['ts'],
  timeout: 120000,
  reporter: 'spec',
  exit: true,
  forbidOnly: Boolean(process.env.CI),
};
