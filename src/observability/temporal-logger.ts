import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import type { Logger } from '../config/logger';

// Our logger interface has no trace level: the SDK's trace lines go out as debug.
const LEVEL: Record<LogLevel, 'debug' | 'info' | 'warn' | 'error'> = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

/**
 * The Temporal SDK's logger (workflow and activity context loggers, the worker's own messages)
 * writing through pino: one JSON line each, carrying the ids the SDK adds (workflowId, runId,
 * activityId, taskQueue, attempt ...) as fields, so logs of a workflow can be found by its id.
 */
export function temporalLoggerFor(logger: Logger): TemporalLogger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(meta ?? {})) fields[k] = v;
    logger[LEVEL[level]](fields, message);
  };
  return {
    log: write,
    trace: (m, meta) => write('TRACE', m, meta),
    debug: (m, meta) => write('DEBUG', m, meta),
    info: (m, meta) => write('INFO', m, meta),
    warn: (m, meta) => write('WARN', m, meta),
    error: (m, meta) => write('ERROR', m, meta),
  };
}
