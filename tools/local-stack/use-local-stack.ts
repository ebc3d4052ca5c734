import { localStackEnv } from './stack-config';

// Preloaded by the npm scripts that start a worker process on its own (`npm run worker:relay`,
// ...): the process gets the local stack's services, each worker logging in as its own
// component's user, wherever the environment names none. The library reads only the environment.
Object.assign(process.env, localStackEnv(process.env, { workerLogins: true }));
