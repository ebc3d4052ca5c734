import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { cachePaths } from '../../tools/local-stack/paths';
import { toxiproxyServer } from '../../tools/local-stack/toxiproxy';
import { ForgettingGate } from './forgetting-gate';
import { trackChild } from './spawned-children';

// A fault proxy between one worker process and one service: the worker is given `link.address`
// instead of the service's, and the test breaks, slows or heals that one link while the others
// stay direct. Two layers, each doing what it does well:
//
//   worker → ForgettingGate (Node, this kit) → Toxiproxy → service
//
// Toxiproxy's toxics give the black hole (`timeout` 0: bytes dropped, sockets kept), the reset
// (`reset_peer`: RST on the next byte), latency with jitter, the bandwidth cap, each on one
// stream or both. Removing a `timeout` toxic closes the connections it held, though, and a
// toxic applies to every connection of a proxy, so Toxiproxy alone cannot heal the way a NAT
// that forgot its table does: old connections silently dead for ever, new ones passing. The
// gate does that one thing: on a heal with `oldConnections: 'dead'` it freezes every connection
// open at that moment (the worker's end stays open, its bytes are swallowed, the service's close
// never reaches it) before the toxics go.

/** `upstream`: worker → service; `downstream`: service → worker. */
export type Direction = 'both' | 'upstream' | 'downstream';

export interface FaultLink {
  readonly name: string;
  /** host:port the worker connects to instead of the service. */
  readonly address: string;
  readonly host: string;
  readonly port: number;
  /** Bytes dropped, connections kept open, nothing closed or reset. */
  blackHole(opts?: { direction?: Direction }): Promise<void>;
  /** Every connection is reset (RST) at its next byte, new ones included, until healed. */
  reset(opts?: { direction?: Direction }): Promise<void>;
  latency(opts: { ms: number; jitterMs?: number; direction?: Direction }): Promise<void>;
  bandwidth(opts: { kilobytesPerSecond: number; direction?: Direction }): Promise<void>;
  /**
   * Removes every fault. `dead`: the connections open now stay silent for ever (a NAT or load
   * balancer forgot them), only new ones pass. `alive`: the ones Toxiproxy kept carry on (a black
   * hole's connections are closed by Toxiproxy when it is removed; latency and bandwidth's go on).
   */
  heal(opts: { oldConnections: 'dead' | 'alive' }): Promise<void>;
  /**
   * With no fault on: the open connection that carried the most bytes from the worker goes
   * silent for ever (a NAT or load balancer that lost that one entry), the others and new ones
   * pass. Throws when none is open.
   */
  forgetBusiestConnection(): void;
  /** Connections the gate froze (a `dead` heal, forgetBusiestConnection) that the worker still holds open. */
  frozenConnections(): number;
}

export interface FaultProxy {
  /**
   * `forgetting: false` leaves the gate out (the worker connects to Toxiproxy itself): nothing of
   * the link's traffic passes through this process, and a heal can only keep old connections
   * alive. For a benchmark that only adds latency.
   */
  link(name: string, upstream: { host: string; port: number }, opts?: { forgetting?: boolean }): Promise<FaultLink>;
  close(): Promise<void>;
}

/** Starts a Toxiproxy server of its own on a free port (built once into the cache folder). */
export async function startFaultProxy(opts: { log?: (m: string) => void } = {}): Promise<FaultProxy> {
  const binary = await toxiproxyServer(cachePaths(loadStackConfig().local.cacheDir), opts.log ?? (() => undefined));
  const apiPort = await freePort();
  const server = trackChild(spawn(binary, ['-host', '127.0.0.1', '-port', String(apiPort)], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  server.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const api = new ToxiproxyApi(`http://127.0.0.1:${apiPort}`);
  const deadline = Date.now() + 15_000;
  while (!(await api.answers())) {
    if (server.exitCode !== null) throw new Error(`toxiproxy-server exited (${server.exitCode}): ${stderr}`);
    if (Date.now() > deadline) throw new Error(`toxiproxy-server did not answer on port ${apiPort} within 15 s: ${stderr}`);
    await sleep(100);
  }
  const gates: ForgettingGate[] = [];
  return {
    async link(name, upstream, linkOpts = {}) {
      const proxied = await api.createProxy(name, `${upstream.host}:${upstream.port}`);
      if (linkOpts.forgetting === false) return new ToxiproxyLink(name, api, proxied);
      const gate = await ForgettingGate.start(proxied);
      gates.push(gate);
      return new ToxiproxyLink(name, api, proxied, gate);
    },
    async close() {
      for (const gate of gates) await gate.close();
      await stopProcess(server);
    },
  };
}

class ToxiproxyLink implements FaultLink {
  private toxics: string[] = [];
  readonly host: string;
  readonly port: number;

  constructor(
    readonly name: string,
    private readonly api: ToxiproxyApi,
    proxied: { host: string; port: number },
    private readonly gate?: ForgettingGate,
  ) {
    this.host = '127.0.0.1';
    this.port = gate?.port ?? proxied.port;
  }

  get address() {
    return `${this.host}:${this.port}`;
  }

  blackHole(opts: { direction?: Direction } = {}) {
    return this.add('timeout', { timeout: 0 }, opts.direction);
  }

  reset(opts: { direction?: Direction } = {}) {
    return this.add('reset_peer', { timeout: 0 }, opts.direction);
  }

  latency(opts: { ms: number; jitterMs?: number; direction?: Direction }) {
    return this.add('latency', { latency: opts.ms, jitter: opts.jitterMs ?? 0 }, opts.direction);
  }

  bandwidth(opts: { kilobytesPerSecond: number; direction?: Direction }) {
    return this.add('bandwidth', { rate: opts.kilobytesPerSecond }, opts.direction);
  }

  async heal(opts: { oldConnections: 'dead' | 'alive' }) {
    if (opts.oldConnections === 'dead') {
      if (!this.gate) throw new Error(`link ${this.name} has no gate: it cannot leave old connections dead`);
      this.gate.forgetOpenConnections();
    }
    for (const toxic of this.toxics.splice(0)) await this.api.removeToxic(this.name, toxic);
  }

  forgetBusiestConnection() {
    if (!this.gate) throw new Error(`link ${this.name} has no gate: it cannot leave a connection dead`);
    if (!this.gate.forgetBusiestConnection()) throw new Error(`link ${this.name} has no open connection to forget`);
  }

  frozenConnections() {
    return this.gate?.frozenCount() ?? 0;
  }

  private async add(type: string, attributes: Record<string, number>, direction: Direction = 'both') {
    const streams = direction === 'both' ? (['upstream', 'downstream'] as const) : [direction];
    for (const stream of streams) {
      const toxic = `${type}_${stream}_${this.toxics.length}`;
      await this.api.addToxic(this.name, { name: toxic, type, stream, toxicity: 1, attributes });
      this.toxics.push(toxic);
    }
  }
}

/** Toxiproxy's HTTP API, the four calls the kit needs. */
class ToxiproxyApi {
  constructor(private readonly base: string) {}

  async answers(): Promise<boolean> {
    return fetch(`${this.base}/version`, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false);
  }

  /** Listens on a free port Toxiproxy picks; returns that port. */
  async createProxy(name: string, upstream: string): Promise<{ host: string; port: number }> {
    const created = (await this.call('POST', '/proxies', { name, listen: '127.0.0.1:0', upstream, enabled: true })) as { listen: string };
    const port = Number(created.listen.split(':').pop());
    return { host: '127.0.0.1', port };
  }

  async addToxic(proxy: string, toxic: { name: string; type: string; stream: string; toxicity: number; attributes: Record<string, number> }) {
    await this.call('POST', `/proxies/${proxy}/toxics`, toxic);
  }

  async removeToxic(proxy: string, toxic: string) {
    await this.call('DELETE', `/proxies/${proxy}/toxics/${toxic}`);
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`toxiproxy ${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function stopProcess(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
