import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { newKafkaClusterId, resolveJars, writeLog4j, writeProperties } from '../../tools/local-stack/kafka';
import { cachePaths } from '../../tools/local-stack/paths';
import { isListening } from '../../tools/local-stack/ports';
import { startDaemon, stopDaemon, waitUntil } from '../../tools/local-stack/processes';

// A Kafka 3.9 KRaft node of a test's own that authenticates clients with SASL SCRAM-SHA-512,
// the mechanism managed services (Confluent Cloud aside, which uses PLAIN over TLS) most often
// ask for. Clients use its SASL_PLAINTEXT listener; the broker talks to itself over PLAINTEXT.
// The credential is created when the storage is formatted (`--add-scram`), as KRaft allows
// before the first start. The main cache's jars are reused: nothing is downloaded.

export interface SaslBroker {
  /** host:port of the SASL_PLAINTEXT listener. */
  saslAddress: string;
  /** host:port of the SASL_SSL listener (TLS with the given certificate), when one was asked for. */
  saslSslAddress?: string;
  username: string;
  password: string;
  logFile: string;
  stop(): Promise<void>;
}

export async function startSaslBroker(dir: string, basePort: number, tls?: { certFile: string; keyFile: string }): Promise<SaslBroker> {
  const mainPaths = cachePaths(loadStackConfig().local.cacheDir);
  resolveJars(mainPaths, () => undefined);
  const paths = { ...cachePaths(dir), kafkaLibs: mainPaths.kafkaLibs };
  const [plainPort, saslPort, controllerPort, saslSslPort] = [basePort, basePort + 1, basePort + 2, basePort + 3];
  for (const port of [plainPort, saslPort, controllerPort, saslSslPort]) if (await isListening(port)) throw new Error(`port ${port} is taken`);
  // Kafka reads a PEM key store: the certificate and its (unencrypted PKCS#8) key in one file.
  const keyStore = path.join(dir, 'kafka-sasl', 'server-keystore.pem');
  const sslListener = tls ? `,SASL_SSL://127.0.0.1:${saslSslPort}` : '';
  const sslProperties: Record<string, string> = tls
    ? {
        'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
        'listener.name.sasl_ssl.ssl.keystore.type': 'PEM',
        'listener.name.sasl_ssl.ssl.keystore.location': keyStore,
      }
    : {};
  const username = 'outbox-svc';
  const password = crypto.randomBytes(18).toString('base64url');
  const dataDir = path.join(dir, 'kafka-sasl', 'data');
  const configFile = path.join(dir, 'kafka-sasl', 'server.properties');
  writeProperties(configFile, {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort},CONTROLLER://127.0.0.1:${controllerPort}${sslListener}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}${sslListener}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT',
    ...sslProperties,
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
    'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'log.dirs': dataDir,
    'offsets.topic.replication.factor': '1',
    'offsets.topic.num.partitions': '3',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    'auto.create.topics.enable': 'false',
    'num.network.threads': '2',
    'num.io.threads': '2',
  });
  if (tls) fs.writeFileSync(keyStore, `${fs.readFileSync(tls.keyFile, 'utf8').trim()}\n${fs.readFileSync(tls.certFile, 'utf8').trim()}\n`, { mode: 0o600 });
  fs.mkdirSync(paths.logs, { recursive: true });
  fs.mkdirSync(path.dirname(paths.kafkaLog4j), { recursive: true });
  writeLog4j(paths);
  // The credential at format time; the password is a throwaway of this test's broker.
  execFileSync(
    'java',
    ['-cp', `${paths.kafkaLibs}/*`, `-Dlog4j.configuration=file:${paths.kafkaLog4j}`, 'kafka.tools.StorageTool', 'format', '-t', newKafkaClusterId(), '-c', configFile, '--add-scram', `SCRAM-SHA-512=[name=${username},password=${password}]`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const logFile = path.join(paths.logs, 'kafka-sasl.log');
  const pid = startDaemon({
    name: 'kafka-sasl',
    command: 'java',
    args: ['-Xms256m', '-Xmx512m', '-XX:+UseG1GC', '-Djava.awt.headless=true', `-Dlog4j.configuration=file:${paths.kafkaLog4j}`, '-cp', `${paths.kafkaLibs}/*`, 'kafka.Kafka', configFile],
    runDir: paths.run,
    logFile,
  });
  const saslAddress = `127.0.0.1:${saslPort}`;
  await waitUntil(`the SASL broker on ${saslAddress}`, () => answersWithSasl(saslAddress, username, password), { timeoutMs: 120_000, pid, logFile });
  return { saslAddress, saslSslAddress: tls ? `127.0.0.1:${saslSslPort}` : undefined, username, password, logFile, stop: () => stopDaemon(paths.run, 'kafka-sasl', 20_000).then(() => undefined) };
}

async function answersWithSasl(broker: string, username: string, password: string): Promise<boolean> {
  const admin = new Kafka({ clientId: 'sasl-probe', brokers: [broker], sasl: { mechanism: 'scram-sha-512', username, password }, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.controller !== null;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
