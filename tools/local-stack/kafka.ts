import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type { StackConfig as Config } from './stack-config';
import { PROJECT_ROOT } from '../../src/config/env';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';
import { requireCommand } from './toolchain';

// Apache Kafka 3.9 as one KRaft node (broker and controller in one JVM), from Maven Central
// jars resolved by tools/local-stack/kafka/pom.xml and started with `java -cp`; or, with LOCAL_KAFKA_BROKERS=3,
// a KRaft cluster of three such nodes (tools/local-stack/kafka-cluster.ts).

export const KAFKA_SERVICE = 'kafka';
const POM = path.join(PROJECT_ROOT, 'tools', 'local-stack', 'kafka', 'pom.xml');

export async function kafkaStatus(config: Config, paths: CachePaths) {
  return { pid: runningPid(paths.run, KAFKA_SERVICE), listening: await isListening(config.local.kafkaPort) };
}

export async function ensureKafka(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const { kafkaPort, kafkaControllerPort } = config.local;
  let pid = runningPid(paths.run, KAFKA_SERVICE);
  if (pid !== undefined) {
    await waitUntil(`Kafka on port ${kafkaPort}`, () => brokerAnswers(kafkaPort), { timeoutMs: 60_000, pid });
    return false;
  }
  for (const port of [kafkaPort, kafkaControllerPort]) {
    if (await isListening(port)) {
      throw new StackError(`port ${port} is taken by a process that is not this project's Kafka: stop it, or set LOCAL_KAFKA_PORT / LOCAL_KAFKA_CONTROLLER_PORT, or KAFKA_BROKERS to use that broker`);
    }
  }
  requireCommand('java', 'Java 17 or newer is needed to run Kafka: install it with `apt-get install openjdk-17-jre-headless`, or set KAFKA_BROKERS to your own broker');
  resolveJars(paths, log);
  writeConfig(config, paths);
  formatStorage(paths, log);
  const logFile = path.join(paths.logs, 'kafka.log');
  pid = startDaemon({
    name: KAFKA_SERVICE,
    command: 'java',
    args: [
      '-Xms512m',
      '-Xmx1g',
      '-XX:+UseG1GC',
      '-XX:MaxGCPauseMillis=20',
      '-Djava.awt.headless=true',
      `-Dlog4j.configuration=file:${paths.kafkaLog4j}`,
      '-cp',
      `${paths.kafkaLibs}/*`,
      'kafka.Kafka',
      paths.kafkaConfig,
    ],
    runDir: paths.run,
    logFile,
  });
  log(`Kafka starting on 127.0.0.1:${kafkaPort} (log: ${logFile})`);
  await waitUntil(`Kafka to answer on port ${kafkaPort}`, () => brokerAnswers(kafkaPort), { timeoutMs: 90_000, pid, logFile });
  return true;
}

export function stopKafka(paths: CachePaths): Promise<boolean> {
  return stopDaemon(paths.run, KAFKA_SERVICE, 30_000);
}

export function resolveJars(paths: CachePaths, log: (m: string) => void) {
  const haveJars = fs.existsSync(paths.kafkaLibs) && fs.readdirSync(paths.kafkaLibs).some((f) => /^kafka_2\.13-.*\.jar$/.test(f));
  if (haveJars) return;
  requireCommand('mvn', 'Maven is needed once to download the Kafka jars: install it with `apt-get install maven`, or set KAFKA_BROKERS to your own broker');
  log('resolving Apache Kafka jars from Maven Central (first run only)');
  const tmp = `${paths.kafkaLibs}.partial`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    execFileSync('mvn', ['-B', '-q', '-f', POM, `-Dmaven.repo.local=${paths.m2}`, 'dependency:copy-dependencies', `-DoutputDirectory=${tmp}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const out = `${(err as { stdout?: Buffer }).stdout ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new StackError(`Maven could not download the Kafka jars (check Maven's settings and network):\n${out}`);
  }
  // Renamed only when complete, so an interrupted download is never mistaken for a finished one.
  fs.rmSync(paths.kafkaLibs, { recursive: true, force: true });
  fs.renameSync(tmp, paths.kafkaLibs);
}

function writeConfig(config: Config, paths: CachePaths) {
  const { kafkaPort, kafkaControllerPort } = config.local;
  writeProperties(paths.kafkaConfig, {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${kafkaControllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${kafkaPort},CONTROLLER://127.0.0.1:${kafkaControllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${kafkaPort}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': paths.kafkaData,
    'num.partitions': String(config.kafka.partitions),
    'offsets.topic.replication.factor': '1',
    'offsets.topic.num.partitions': '10',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'share.coordinator.state.topic.replication.factor': '1',
    // Tests create and delete many groups; without this a new group waits 3 s before its first assignment.
    'group.initial.rebalance.delay.ms': '0',
    // Topics are created explicitly with the partition count the project asks for.
    'auto.create.topics.enable': 'false',
    'message.max.bytes': String(config.kafka.maxMessageBytes + 1024),
    'log.retention.ms': String(config.kafka.topicRetentionMs),
    'num.network.threads': '2',
    'num.io.threads': '4',
  });
  writeLog4j(paths);
}

export function writeProperties(file: string, properties: Record<string, string>) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Object.entries(properties).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
}

export function writeLog4j(paths: CachePaths) {
  fs.writeFileSync(
    paths.kafkaLog4j,
    [
      '# Kafka logs one line per event to stdout, which the daemon sends to .cache/logs/kafka.log.',
      'log4j.rootLogger=INFO, stdout',
      'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
      'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c{1})%n',
      'log4j.logger.kafka=INFO',
      'log4j.logger.org.apache.kafka=INFO',
      'log4j.logger.kafka.request.logger=WARN',
      'log4j.logger.state.change.logger=WARN',
      'log4j.logger.kafka.log.LogCleaner=WARN',
      'log4j.logger.org.apache.kafka.storage.internals.log=WARN',
      'log4j.logger.kafka.coordinator.group=WARN',
      'log4j.logger.org.apache.kafka.coordinator.group=WARN',
      '',
    ].join('\n'),
  );
}

/** KRaft storage must be formatted once; a data folder without meta.properties was left half-formatted. */
function formatStorage(paths: CachePaths, log: (m: string) => void) {
  formatNodeStorage(paths, { dataDir: paths.kafkaData, configFile: paths.kafkaConfig, clusterId: newKafkaClusterId() }, log);
}

/**
 * A random KRaft cluster id: 16 bytes in URL-safe base64, as `kafka-storage random-uuid` prints.
 * Like Kafka's own Uuid.randomUuid, it never starts with '-': the storage tool's argument parser
 * would read such an id as an option and refuse to format (one id in 64 did, failing CI).
 */
export function newKafkaClusterId(randomBytes: (size: number) => Buffer = crypto.randomBytes): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** Formats one node's KRaft storage with the given cluster id, unless it already is. */
export function formatNodeStorage(paths: CachePaths, node: { dataDir: string; configFile: string; clusterId: string }, log: (m: string) => void) {
  const { dataDir, configFile, clusterId } = node;
  if (fs.existsSync(path.join(dataDir, 'meta.properties'))) return;
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
    log(`Kafka data folder ${dataDir} has no meta.properties (half-formatted by an interrupted run): removing it and formatting anew`);
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  try {
    execFileSync('java', ['-cp', `${paths.kafkaLibs}/*`, `-Dlog4j.configuration=file:${paths.kafkaLog4j}`, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', configFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    const msg = `${(err as { stderr?: Buffer }).stderr ?? ''}${(err as { stdout?: Buffer }).stdout ?? ''}`.trim().split('\n').slice(-3).join(' ');
    throw new StackError(`formatting Kafka storage failed: ${msg}`);
  }
}

/** The broker on `port` answers, knows a controller and sees at least `brokers` brokers. */
export async function brokerAnswers(port: number, brokers = 1): Promise<boolean> {
  const admin = new Kafka({ clientId: 'stack-probe', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length >= brokers && cluster.controller !== null;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
