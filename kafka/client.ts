import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Config } from '../config/env';
import { kafkaConnectionOptions } from './connection-options';

/** kafkajs logs through our logger's level rules: errors only unless LOG_LEVEL asks for more. */
export function createKafka(config: Config, clientId: string): Kafka {
  return new Kafka({
    clientId,
    ...kafkaConnectionOptions(config),
    logLevel: config.logLevel === 'debug' || config.logLevel === 'trace' ? logLevel.INFO : logLevel.ERROR,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...rest } = entry.log;
      process.stderr.write(`${JSON.stringify({ level: entry.label, name: `kafkajs:${entry.namespace}`, msg: message, ...rest })}\n`);
    },
    retry: { initialRetryTime: 200, retries: 8 },
  });
}
