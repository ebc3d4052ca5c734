import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

// TLS in front of a plaintext local service, for tests of clients' TLS settings where the
// service itself has none (the Temporal dev server has no TLS options). The proxy terminates TLS
// — asking for a client certificate signed by the test's CA when `requireClientCert` — and
// passes the bytes through unchanged; gRPC keeps speaking HTTP/2 end to end ('h2' by ALPN).

export interface TestPki {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

/** A CA, a server certificate for `serverName` (and 127.0.0.1), and a client certificate, made with openssl. */
export function makeTestPki(dir: string, serverName: string): TestPki {
  fs.mkdirSync(dir, { recursive: true });
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=outbox test CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  const leaf = (name: string, subject: string, ext: string) => {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.crt`);
  };
  leaf('server', `/CN=${serverName}`, `subjectAltName=DNS:${serverName},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`);
  leaf('client', '/CN=outbox-worker', 'extendedKeyUsage=clientAuth\n');
  const file = (f: string) => path.join(dir, f);
  return { dir, caFile: file('ca.crt'), serverCertFile: file('server.crt'), serverKeyFile: file('server.key'), clientCertFile: file('client.crt'), clientKeyFile: file('client.key') };
}

export interface TlsProxy {
  address: string;
  /** Handshakes refused so far, with the reason the TLS layer gave. */
  refused: string[];
  close(): Promise<void>;
}

export async function startTlsProxy(pki: TestPki, target: { host: string; port: number }, opts: { requireClientCert: boolean }): Promise<TlsProxy> {
  const refused: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    {
      cert: fs.readFileSync(pki.serverCertFile),
      key: fs.readFileSync(pki.serverKeyFile),
      ca: fs.readFileSync(pki.caFile),
      requestCert: opts.requireClientCert,
      rejectUnauthorized: opts.requireClientCert,
      ALPNProtocols: ['h2'],
    },
    (client) => {
      const upstream = net.connect(target.port, target.host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    },
  );
  server.on('tlsClientError', (err) => refused.push(err.message));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface GrpcAuthProxy {
  address: string;
  /** The `authorization` header of every call seen, in order. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * A TLS HTTP/2 proxy that forwards each gRPC call to a plaintext server, refusing (gRPC status
 * 16, unauthenticated) a call whose `authorization` is not `Bearer <apiKey>`: what an API-key
 * endpoint such as Temporal Cloud's checks first.
 */
export async function startGrpcAuthProxy(pki: TestPki, target: { host: string; port: number }, apiKey: string): Promise<GrpcAuthProxy> {
  const http2 = await import('node:http2');
  const authorizations: (string | undefined)[] = [];
  const upstream = http2.connect(`http://${target.host}:${target.port}`);
  upstream.on('error', () => undefined);
  const server = http2.createSecureServer({ cert: fs.readFileSync(pki.serverCertFile), key: fs.readFileSync(pki.serverKeyFile), allowHTTP1: false });
  const sessions = new Set<import('node:http2').ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const authorization = headers.authorization as string | undefined;
    authorizations.push(authorization);
    if (authorization !== `Bearer ${apiKey}`) {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'missing or wrong API key' }, { endStream: true });
      return;
    }
    const forwarded: Record<string, string | string[] | undefined> = {};
    for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':') || k === ':method' || k === ':path') forwarded[k] = v;
    const call = upstream.request(forwarded);
    call.on('error', () => stream.destroy());
    call.on('response', (responseHeaders) => {
      stream.respond(responseHeaders, { waitForTrailers: true });
      call.pipe(stream);
    });
    let trailers: Record<string, string | string[] | undefined> = {};
    call.on('trailers', (t) => (trailers = t));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers as Record<string, string>));
    stream.pipe(call);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        upstream.destroy();
        server.close(() => resolve());
      }),
  };
}
