import net from 'node:net';
import tls from 'node:tls';
import type { ISocketFactory, KafkaConfig, SASLOptions } from 'kafkajs';
import type { Config } from '../config/env';

/**
 * Brokers, TLS, SASL and the dead-link bounds for every Kafka client of the project (workers,
 * setup, doctor, metrics): one place, so a managed cluster's settings reach them all
 * (docs/managed-services.md). kafkajs's own defaults wait 30 s for a request and start TCP
 * keepalive after 60 s idle; ours (KAFKA_*_TIMEOUT_MS, KAFKA_KEEPALIVE_IDLE_MS) notice a dead
 * broker link within the bounds of docs/guarantees.md#dead-links.
 */
export function kafkaConnectionOptions(
  config: Config,
  use: KafkaSocketUse = {},
): Pick<KafkaConfig, 'brokers' | 'ssl' | 'sasl' | 'connectionTimeout' | 'authenticationTimeout' | 'requestTimeout' | 'enforceRequestTimeout' | 'socketFactory'> {
  const { ssl, sasl } = config.kafka;
  const bounds = config.links.kafka;
  return {
    brokers: config.kafka.brokers,
    ...(ssl ? { ssl: { ca: ssl.ca, cert: ssl.cert, key: ssl.key, rejectUnauthorized: ssl.rejectUnauthorized } } : {}),
    ...(sasl ? { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions } : {}),
    connectionTimeout: bounds.connectionTimeoutMs,
    authenticationTimeout: bounds.authenticationTimeoutMs,
    requestTimeout: bounds.requestTimeoutMs,
    enforceRequestTimeout: true,
    socketFactory: routedSocketFactory(bounds.brokerRoutes, bounds.keepAliveIdleMs, silenceBoundMs(config, use.groupMember ?? true), use.onPresumedDead),
  };
}

/** What the clients of one kafkajs instance wait on, and who hears of a connection presumed dead. */
export interface KafkaSocketUse {
  /**
   * False when none of its clients joins a consumer group or fetches (a producer, an admin): each
   * of their requests is then bounded by the request timeout alone. Default true.
   */
  groupMember?: boolean;
  /** Called when one of its connections is destroyed for its silence (after kafkajs is told). */
  onPresumedDead?: (error: Error) => void;
}

// Margin over the longest wait a broker may legitimately take before answering.
const SILENCE_MARGIN_MS = 5_000;
// Without group requests the longest wait is the request timeout itself, which kafkajs enforces
// on a timer of its own: one second past it, the request has failed.
const REQUEST_SILENCE_MARGIN_MS = 1_000;

/**
 * How long a broker may stay silent while a request waits before the connection is presumed
 * dead. A group member: the request timeout, or the consumer's rebalance timeout (a JoinGroup is
 * answered only when the rebalance completes), whichever is longer, plus a margin (25 s at the
 * defaults). Otherwise (a producer, an admin: no request of theirs waits longer than the request
 * timeout, kafkajs overrides it only for JoinGroup and Fetch) the request timeout plus a second
 * (16 s): the request that opened the silence has failed by then, and a broker answers a
 * connection's requests in order, so nothing behind it on that connection could have come sooner.
 */
export function silenceBoundMs(config: Config, groupMember = true): number {
  const requestTimeoutMs = config.links.kafka.requestTimeoutMs;
  return groupMember ? Math.max(requestTimeoutMs, config.consumer.rebalanceTimeoutMs) + SILENCE_MARGIN_MS : requestTimeoutMs + REQUEST_SILENCE_MARGIN_MS;
}

/**
 * kafkajs's socket factory, plus three things: keepalive after `keepAliveIdleMs`, a close when the
 * broker stays silent (`closeWhenSilent`), and routes. A
 * broker tells clients the address it advertises, and kafkajs connects there; behind a tunnel, a
 * private endpoint or a test's fault proxy that address is not reachable as such, so a route
 * (`advertised host:port` → `reachable host:port`) says where to connect instead. TLS still
 * checks the advertised host's name.
 */
export function routedSocketFactory(routes: Record<string, string>, keepAliveIdleMs: number, silenceBound: number, onPresumedDead?: (error: Error) => void): ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    const route = routes[`${host}:${port}`];
    const target = route ? { host: route.slice(0, route.lastIndexOf(':')), port: Number(route.slice(route.lastIndexOf(':') + 1)) } : { host, port };
    const socket = ssl
      ? tls.connect({ ...target, ...(net.isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
      : net.connect(target, onConnect);
    socket.setKeepAlive(true, keepAliveIdleMs);
    closeWhenSilent(socket, silenceBound, onPresumedDead);
    return socket;
  };
}

/**
 * kafkajs fails a request that timed out but keeps its connection, and sends the next request
 * down the same socket: on a link that went silent without closing, every later request times
 * out too, for ever. So the socket itself is destroyed once bytes were written and nothing came
 * back for `boundMs`; kafkajs then sees a closed connection and opens a new one.
 */
function closeWhenSilent(socket: net.Socket, boundMs: number, onPresumedDead?: (error: Error) => void) {
  let waitingSince: number | undefined;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    waitingSince ??= Date.now();
    return write(...args);
  }) as typeof socket.write;
  socket.on('data', () => (waitingSince = undefined));
  const timer = setInterval(() => {
    if (waitingSince !== undefined && Date.now() - waitingSince > boundMs) {
      const error = new Error(`no answer from the Kafka broker for ${boundMs} ms: the connection is presumed dead`);
      socket.destroy(error);
      onPresumedDead?.(error);
    }
  }, Math.min(1000, boundMs));
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}
