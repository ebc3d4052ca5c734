import { Kafka, logLevel, type ISocketFactory, type LogEntry } from 'kafkajs';
import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import { kafkaConnectionOptions, type KafkaSocketUse } from './connection-options';
import { useLeanEncoder } from './lean-encoder';

/**
 * kafkajs logs through `logger` (a worker's: the service's own when it gave one), else as JSON
 * lines on stderr; errors only unless logLevel asks for more.
 * With kafka.leanEncoder, requests are encoded by the lean encoder (src/kafka/lean-encoder.ts), which
 * then serves every kafkajs client of the process: asked for by the bundled workers only.
 * `wrapSockets` wraps the socket factory (a consumer's fence around its own connections); the
 * rest of `sockets` says what its clients wait on (src/kafka/connection-options.ts).
 */
export function createKafka(config: Config, clientId: string, logger?: Logger, sockets: KafkaSocketUse & { wrapSockets?: (factory: ISocketFactory) => ISocketFactory } = {}): Kafka {
  if (config.kafka.leanEncoder) useLeanEncoder();
  const { wrapSockets, ...use } = sockets;
  const connection = kafkaConnectionOptions(config, use);
  return new Kafka({
    clientId,
    ...connection,
    ...(wrapSockets && connection.socketFactory ? { socketFactory: wrapSockets(connection.socketFactory) } : {}),
    logLevel: config.logLevel === 'debug' || config.logLevel === 'trace' ? logLevel.INFO : logLevel.ERROR,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...rest } = entry.log;
      if (logger) logger[LEVELS[entry.level] ?? 'error']({ kafkajs: entry.namespace, ...rest }, message);
      else process.stderr.write(`${JSON.stringify({ level: entry.label, name: `kafkajs:${entry.namespace}`, msg: message, ...rest })}\n`);
    },
    retry: { initialRetryTime: 200, retries: 8 },
  });
}

const LEVELS: Partial<Record<logLevel, 'error' | 'warn' | 'info' | 'debug'>> = { [logLevel.ERROR]: 'error', [logLevel.WARN]: 'warn', [logLevel.INFO]: 'info', [logLevel.DEBUG]: 'debug' };
