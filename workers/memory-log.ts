import type { Logger } from '../src/config/logger';

const MiB = 2 ** 20;
const toMiB = (bytes: number) => Math.round(bytes / MiB);

/**
 * Logs this process's memory every `everyMs` (off unless RELAY_MEMORY_LOG_MS is set): RSS
 * against the main thread's V8 heap and its external memory (Buffers, ArrayBuffers) is what
 * tells a leak in our JavaScript from memory held by workflow threads or the SDK's native core,
 * which RSS includes but the main heap does not. The timer never keeps the process alive; `stop`
 * ends it when the worker returns.
 */
export function startMemoryLog(logger: Logger, everyMs: number | undefined): { stop(): void } | undefined {
  if (everyMs === undefined) return undefined;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    logger.info(
      { memory: { rssMiB: toMiB(m.rss), heapUsedMiB: toMiB(m.heapUsed), heapTotalMiB: toMiB(m.heapTotal), externalMiB: toMiB(m.external), arrayBuffersMiB: toMiB(m.arrayBuffers) } },
      'relay worker memory',
    );
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
