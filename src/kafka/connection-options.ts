import type { KafkaConfig, SASLOptions } from 'kafkajs';
import type { Config } from '../config/env';

/**
 * Brokers, TLS and SASL for every Kafka client of the project (workers, setup, doctor, metrics):
 * one place, so a managed cluster's settings reach them all (docs/managed-services.md).
 */
export function kafkaConnectionOptions(config: Config): Pick<KafkaConfig, 'brokers' | 'ssl' | 'sasl'> {
  const { ssl, sasl } = config.kafka;
  return {
    brokers: config.kafka.brokers,
    ...(ssl ? { ssl: { ca: ssl.ca, cert: ssl.cert, key: ssl.key, rejectUnauthorized: ssl.rejectUnauthorized } } : {}),
    ...(sasl ? { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions } : {}),
  };
}
