import pino, { type Logger } from 'pino';

// One logger factory for processes (workers, CLI, infra). Activities use Temporal's activity
// logger instead, which adds workflow context.
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, redact: ['databaseUrl', '*.password', 'password'] });
}
export type { Logger };
