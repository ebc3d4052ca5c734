import { DefaultLogger, Runtime } from '@temporalio/worker';

// Mocha root hook module: workers created in tests log warnings and errors only, so a test
// run's output stays readable. Installed once per process, before any worker is created.
Runtime.install({ logger: new DefaultLogger('WARN') });
