import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Producer } from 'kafkajs';
import { loadConfig } from '../../src/config/env';
import { createKafka } from '../../src/kafka/client';
import { startFaultProxy, type FaultLink } from '../../test/kit/fault-proxy';
import { createTestTopic } from '../../test/kit/kafka';

// Does removing a latency toxic under traffic leave a connection silent? (Toxiproxy has open
// reports of a toxic removal that hangs: Shopify/toxiproxy#558.) The gray matrix's latency fault,
// exactly as test/kit/gray/cell.ts injects and heals it (200 ms ± 20 ms on the service → worker
// stream, then every toxic removed with the old connections kept), on a plain TCP echo server:
// several connections each keep a message in flight all the time; after the removal every
// connection must answer again. Run: `. ./.stack-env && npx tsx tools/soak/latency-heal-probe.ts [removals] [connections] [in flight] [bytes]`;
// with KAFKA=1, the same against the local broker: that many kafkajs producers (one connection
// each through the link) sending one batch after the other, each of which must complete a send again
// (`npx tsx tools/cli.ts stack run -- env KAFKA=1 npx tsx tools/soak/latency-heal-probe.ts 20 4`).

const REMOVALS = Number(process.argv[2] ?? 30);
const CONNECTIONS = Number(process.argv[3] ?? 6);
// Messages each connection keeps in flight, and their size (a pipelining client moving more bytes).
const IN_FLIGHT = Number(process.argv[4] ?? 1);
const MESSAGE_BYTES = Number(process.argv[5] ?? 200);
const LATENCY_ON_MS = 1_500;
// After the removal a connection must answer within this (one 220 ms delayed answer at most).
const ANSWER_BOUND_MS = 3_000;

class EchoConnection {
  private lastAnswerAt = Date.now();
  private seq = 0;
  private stopped = false;
  answers = 0;
  constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    let buffered = '';
    socket.on('data', (d) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        buffered = buffered.slice(nl + 1);
        this.answers += 1;
        this.lastAnswerAt = Date.now();
        this.send();
      }
    });
    socket.on('error', () => undefined);
  }
  static async open(port: number): Promise<EchoConnection> {
    // Bounded: a proxy that accepts nothing must fail the probe, not hang it.
    const socket = net.connect({ port, host: '127.0.0.1', timeout: 5_000 });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve).once('error', reject);
      socket.once('timeout', () => reject(new Error(`no connection through the proxy within 5 s (port ${port})`)));
    });
    socket.setTimeout(0);
    const c = new EchoConnection(socket);
    for (let i = 0; i < IN_FLIGHT; i++) c.send();
    return c;
  }
  /** The next message sent as soon as one is answered: IN_FLIGHT stay in flight (a request-response client, pipelined). */
  send() {
    if (!this.stopped) this.socket.write(`${++this.seq} ${'x'.repeat(MESSAGE_BYTES)}\n`);
  }
  silentForMs() {
    return Date.now() - this.lastAnswerAt;
  }
  close() {
    this.stopped = true;
    this.socket.destroy();
  }
}

/** A producer sending batches one after the other; `sends` counts the completed ones. */
class SendingProducer {
  sends = 0;
  lastSendAt = Date.now();
  private stopped = false;
  private readonly loop: Promise<void>;
  constructor(
    private readonly producer: Producer,
    topic: string,
  ) {
    this.loop = (async () => {
      while (!this.stopped) {
        await producer.send({ topic, acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ key: String(i), value: 'x'.repeat(MESSAGE_BYTES) })) }).then(
          () => {
            this.sends += 1;
            this.lastSendAt = Date.now();
          },
          () => sleep(100),
        );
      }
    })();
  }
  silentForMs() {
    return Date.now() - this.lastSendAt;
  }
  async close() {
    this.stopped = true;
    await this.loop;
    await this.producer.disconnect().catch(() => undefined);
  }
}

async function viaKafka(link: FaultLink, broker: string) {
  const config = loadConfig({ ...process.env, KAFKA_BROKER_ROUTES: `${broker}=${link.address}` });
  const topic = await createTestTopic(3);
  try {
    return await removals(async () => {
      const producers = await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          const producer = createKafka(config, `latency-heal-probe-${process.pid}`).producer({ retry: { retries: 0 } });
          await producer.connect();
          return new SendingProducer(producer, topic.topic);
        }),
      );
      return { clients: producers, answers: (p: SendingProducer) => p.sends, close: () => Promise.all(producers.map((p) => p.close())) };
    }, link);
  } finally {
    await topic.remove();
  }
}

async function removals<C extends { silentForMs(): number }>(open: () => Promise<{ clients: C[]; answers(c: C): number; close(): Promise<unknown> }>, link: FaultLink) {
  let stalled = 0;
  let stalledRemovals = 0;
  const removeMs: number[] = [];
  for (let i = 1; i <= REMOVALS; i++) {
    const { clients, answers, close } = await open();
    await sleep(300);
    await link.latency({ ms: 200, jitterMs: 20, direction: 'downstream' });
    await sleep(LATENCY_ON_MS + Math.random() * 1_000);
    const t0 = Date.now();
    await link.heal({ oldConnections: 'alive' });
    removeMs.push(Date.now() - t0);
    const before = clients.map(answers);
    await sleep(ANSWER_BOUND_MS);
    const silent = clients.filter((c, k) => answers(c) === before[k] || c.silentForMs() > ANSWER_BOUND_MS);
    stalled += silent.length;
    if (silent.length > 0) stalledRemovals += 1;
    process.stdout.write(`removal ${i}: took ${removeMs.at(-1)} ms; ${CONNECTIONS - silent.length}/${CONNECTIONS} clients answer again${silent.length ? ` (silent for ${silent.map((c) => c.silentForMs()).join(', ')} ms)` : ''}\n`);
    await close();
  }
  removeMs.sort((a, b) => a - b);
  return { stalled, stalledRemovals, removeMs };
}

async function main() {
  if (process.env.KAFKA === '1') {
    const broker = loadConfig().kafka.brokers[0]!;
    const proxy = await startFaultProxy();
    try {
      const link = await proxy.link('kafka', { host: broker.slice(0, broker.lastIndexOf(':')), port: Number(broker.slice(broker.lastIndexOf(':') + 1)) });
      const { stalled, stalledRemovals, removeMs } = await viaKafka(link, broker);
      process.stdout.write(`${REMOVALS} removals of the latency toxic under produce traffic, ${REMOVALS * CONNECTIONS} producers (batches of 20 × ${MESSAGE_BYTES} B): ${stalled} left silent (${stalledRemovals} removals with one or more); removal took ${removeMs[0]}–${removeMs.at(-1)} ms\n`);
    } finally {
      await proxy.close();
    }
    return;
  }
  const echo = net.createServer((s) => {
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const proxy = await startFaultProxy();
  try {
    const link = await proxy.link('echo', { host: '127.0.0.1', port: (echo.address() as net.AddressInfo).port });
    const { stalled, stalledRemovals, removeMs } = await removals(async () => {
      const conns = await Promise.all(Array.from({ length: CONNECTIONS }, () => EchoConnection.open(link.port)));
      return { clients: conns, answers: (c: EchoConnection) => c.answers, close: async () => conns.forEach((c) => c.close()) };
    }, link);
    process.stdout.write(`${REMOVALS} removals of the latency toxic under traffic, ${REMOVALS * CONNECTIONS} connections (${IN_FLIGHT} × ${MESSAGE_BYTES} B in flight each): ${stalled} left silent (${stalledRemovals} removals with one or more); removal took ${removeMs[0]}–${removeMs.at(-1)} ms\n`);
  } finally {
    await proxy.close();
    echo.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
