import { withExampleNames } from '../../examples/example-settings';
import { localStackEnv } from './stack-config';

// Imported first by the tools that start worker processes (benchmarks, the soak): the tool and
// every process it starts get the local stack's services wherever the environment names none.
// The library reads only the environment. They run the payments example, so its topic, group and
// inbox names apply too (examples/example-settings.ts), though not its AUDIT_CONSUMERS: each
// process derives that from its own INBOX_CONSUMER (a test gives each consumer its own).
Object.assign(process.env, withExampleNames(localStackEnv(process.env)));
