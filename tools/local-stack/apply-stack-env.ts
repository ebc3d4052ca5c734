import { localStackEnv } from './stack-config';

// Imported first by the tools that start worker processes (benchmarks, the soak): the tool and
// every process it starts get the local stack's services wherever the environment names none.
// The library reads only the environment.
Object.assign(process.env, localStackEnv(process.env));
