import fs from 'node:fs';
import path from 'node:path';
import type { StackConfig as Config } from './stack-config';
import { StackError } from './errors';
import { brokerAnswers, formatNodeStorage, KAFKA_SERVICE, newKafkaClusterId, resolveJars, writeLog4j, writeProperties } from './kafka';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';
import { requireCommand } from './toolchain';

// A local KRaft cluster (LOCAL_KAFKA_BROKERS=3): every node is broker and controller, so the
// controller quorum and each partition's replicas survive losing one node. The project's topics
// are replicated 3 times with min.insync.replicas=2 (src/kafka/topics.ts), the internal topics too,
// so a write acknowledged by acks=all is on two nodes before the relay marks it published.
// The single-node stack (tools/local-stack/kafka.ts) stays as it is; the two never run from one cache folder.

const NODE_PREFIX = 'kafka-node-';

export function clusterNodeName(nodeId: number): string {
  return `${NODE_PREFIX}${nodeId}`;
}

/** The nodes of a cluster whose PID files are in this cache folder, running or not. */
export function clusterNodeNames(paths: CachePaths): string[] {
  if (!fs.existsSync(paths.run)) return [];
  return fs
    .readdirSync(paths.run)
    .filter((f) => f.startsWith(NODE_PREFIX) && f.endsWith('.pid'))
    .map((f) => f.slice(0, -'.pid'.length))
    .sort();
}

export function clusterNodePid(paths: CachePaths, nodeId: number): number | undefined {
  return runningPid(paths.run, clusterNodeName(nodeId));
}

function clusterDir(paths: CachePaths, size: number): string {
  return path.join(paths.root, 'kafka', `cluster-${size}`);
}

export async function kafkaClusterStatus(config: Config, paths: CachePaths) {
  const pid = config.local.kafkaNodes.map((n) => clusterNodePid(paths, n.nodeId)).find((p) => p !== undefined);
  return { pid, listening: await isListening(config.local.kafkaPort) };
}

/** Starts the nodes of the cluster that are not running; true when this call started any. */
export async function ensureKafkaCluster(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const nodes = config.local.kafkaNodes;
  if (runningPid(paths.run, KAFKA_SERVICE) !== undefined) {
    throw new StackError(`a single-node Kafka runs from this cache folder: \`npm run stack:down\` first to start a cluster of ${nodes.length}`);
  }
  const dir = clusterDir(paths, nodes.length);
  const toStart = nodes.filter((n) => clusterNodePid(paths, n.nodeId) === undefined);
  for (const node of toStart) {
    for (const port of [node.port, node.controllerPort]) {
      if (await isListening(port)) {
        throw new StackError(`port ${port} (Kafka node ${node.nodeId}) is taken by a process that is not this project's Kafka: stop it, or set LOCAL_KAFKA_PORT / LOCAL_KAFKA_CONTROLLER_PORT`);
      }
    }
  }
  if (toStart.length > 0) {
    requireCommand('java', 'Java 17 or newer is needed to run Kafka: install it with `apt-get install openjdk-17-jre-headless`, or set KAFKA_BROKERS to your own broker');
    resolveJars(paths, log);
    writeLog4j(paths);
    // One cluster id for every node, kept beside their data so a restart formats nothing.
    const idFile = path.join(dir, 'cluster-id');
    fs.mkdirSync(dir, { recursive: true });
    if (!fs.existsSync(idFile)) fs.writeFileSync(idFile, newKafkaClusterId());
    const clusterId = fs.readFileSync(idFile, 'utf8').trim();
    const voters = nodes.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`).join(',');
    for (const node of toStart) {
      const configFile = path.join(dir, `node-${node.nodeId}.properties`);
      const dataDir = path.join(dir, `node-${node.nodeId}`, 'data');
      writeProperties(configFile, nodeProperties(config, node, voters, dataDir));
      formatNodeStorage(paths, { dataDir, configFile, clusterId }, log);
      const logFile = path.join(paths.logs, `${clusterNodeName(node.nodeId)}.log`);
      startDaemon({
        name: clusterNodeName(node.nodeId),
        command: 'java',
        // Three JVMs on a small machine: half the single node's heap each.
        args: ['-Xms256m', '-Xmx512m', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true', `-Dlog4j.configuration=file:${paths.kafkaLog4j}`, '-cp', `${paths.kafkaLibs}/*`, 'kafka.Kafka', configFile],
        runDir: paths.run,
        logFile,
      });
      log(`Kafka node ${node.nodeId} of ${nodes.length} starting on 127.0.0.1:${node.port} (log: ${logFile})`);
    }
  }
  // Ready when every node answers and sees the whole cluster (the quorum elected a controller).
  for (const node of nodes) {
    const logFile = path.join(paths.logs, `${clusterNodeName(node.nodeId)}.log`);
    await waitUntil(`Kafka node ${node.nodeId} to answer on port ${node.port} and see ${nodes.length} brokers`, () => brokerAnswers(node.port, nodes.length), {
      timeoutMs: 120_000,
      pid: clusterNodePid(paths, node.nodeId),
      logFile,
    });
  }
  return toStart.length > 0;
}

export async function stopKafkaCluster(paths: CachePaths): Promise<boolean> {
  const stopped = await Promise.all(clusterNodeNames(paths).map((name) => stopDaemon(paths.run, name, 30_000)));
  return stopped.some(Boolean);
}

function nodeProperties(config: Config, node: { nodeId: number; port: number; controllerPort: number }, voters: string, dataDir: string): Record<string, string> {
  const replicas = String(config.kafka.replicationFactor);
  const minIsr = String(config.kafka.minInsyncReplicas);
  return {
    'process.roles': 'broker,controller',
    'node.id': String(node.nodeId),
    'controller.quorum.voters': voters,
    listeners: `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${node.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': dataDir,
    'num.partitions': String(config.kafka.partitions),
    // Consumer offsets and every other topic replicated like the project's own: losing the
    // group coordinator's node must not lose committed offsets.
    'default.replication.factor': replicas,
    'min.insync.replicas': minIsr,
    'offsets.topic.replication.factor': replicas,
    'offsets.topic.num.partitions': '10',
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minIsr,
    'share.coordinator.state.topic.replication.factor': replicas,
    'group.initial.rebalance.delay.ms': '0',
    'auto.create.topics.enable': 'false',
    // A replica that fell behind never becomes leader: no acknowledged write is lost.
    'unclean.leader.election.enable': 'false',
    'message.max.bytes': String(config.kafka.maxMessageBytes + 1024),
    'replica.fetch.max.bytes': String(config.kafka.maxMessageBytes + 1024),
    'log.retention.ms': String(config.kafka.topicRetentionMs),
    'num.network.threads': '2',
    'num.io.threads': '2',
  };
}
