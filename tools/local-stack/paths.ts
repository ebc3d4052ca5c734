import path from 'node:path';

/** Where each local service keeps its binaries, data, logs and PID file, inside the one cache folder. */
export function cachePaths(cacheDir: string) {
  return {
    root: cacheDir,
    bin: path.join(cacheDir, 'bin'),
    logs: path.join(cacheDir, 'logs'),
    run: path.join(cacheDir, 'run'),
    go: path.join(cacheDir, 'go'),
    downloads: path.join(cacheDir, 'downloads'),
    m2: path.join(cacheDir, 'm2'),
    kafkaLibs: path.join(cacheDir, 'kafka', 'libs'),
    kafkaData: path.join(cacheDir, 'kafka', 'data'),
    kafkaConfig: path.join(cacheDir, 'kafka', 'server.properties'),
    kafkaLog4j: path.join(cacheDir, 'kafka', 'log4j.properties'),
    pgData: path.join(cacheDir, 'postgres', 'data'),
    pgSocket: path.join(cacheDir, 'postgres', 'socket'),
    temporalDb: path.join(cacheDir, 'temporal', 'dev.db'),
  };
}
export type CachePaths = ReturnType<typeof cachePaths>;
