import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Config } from '../config/env';
import { kafkaConnectionOptions } from './connection-options';
import { useLeanEncoder } from './lean-encoder';

/**
 * kafkajs logs through our logger's level rules: errors only unless LOG_LEVEL asks for more.
 * With kafka.leanEncoder, requests are encoded by the lean encoder (src/kafka/lean-encoder.ts), which
 * then serves every kafkajs client of the process: asked for by the bundled workers only.
 */
export function createKafka(config: Config, clientId: string): Kafka {
  if (config.kafka.leanEncoder) useLeanEncoder();
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
