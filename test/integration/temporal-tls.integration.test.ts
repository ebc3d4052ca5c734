import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../src/config/env';
import { temporalConnectionOptions } from '../../src/temporal/connection-options';
import { makeTestPki, startGrpcAuthProxy, startTlsProxy, type GrpcAuthProxy, type TestPki, type TlsProxy } from '../kit/tls-proxy';

// Temporal mTLS as Temporal Cloud asks for it: the client presents a certificate, checks the
// server's against a CA, under a server name. The dev server has no TLS options, so a proxy of
// this test's own terminates mutual TLS in front of it (certificates made by openssl here) and
// passes the gRPC bytes through. Both kinds of connection the project opens are tried with
// exactly the options the configuration builds: the client's (setup, CLI, doctor) and the
// worker's native one.
describe('Temporal mTLS: TEMPORAL_TLS_CLIENT_CERT_PATH, _CLIENT_KEY_PATH, _SERVER_CA_CERT_PATH, _SERVER_NAME (@temporalio/envconfig)', function () {
  this.timeout(120_000);
  const SERVER_NAME = 'temporal.outbox.test';
  let dir: string;
  let pki: TestPki;
  let proxy: TlsProxy;
  const shared = loadConfig();

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-temporal-tls-'));
    pki = makeTestPki(dir, SERVER_NAME);
    const [host, port] = shared.temporal.address.split(':');
    proxy = await startTlsProxy(pki, { host: host!, port: Number(port) }, { requireClientCert: true });
  });
  after(async () => {
    await proxy?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const settings = (extra: Record<string, string>) => loadConfig({ ...process.env, TEMPORAL_ADDRESS: proxy.address, ...extra });
  const mtls = () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCertFile, TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKeyFile, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caFile, TEMPORAL_TLS_SERVER_NAME: SERVER_NAME });
  // The names used before envconfig's: they still work (with a notice).
  const legacyMtls = () => ({ TEMPORAL_TLS_CERT_FILE: pki.clientCertFile, TEMPORAL_TLS_KEY_FILE: pki.clientKeyFile, TEMPORAL_TLS_CA_FILE: pki.caFile, TEMPORAL_TLS_SERVER_NAME: SERVER_NAME });

  /** The server's answer through the proxy with these settings, or the error. */
  async function systemInfo(kind: 'client' | 'worker', extra: Record<string, string>): Promise<string> {
    const options = temporalConnectionOptions(settings(extra), { connectTimeout: 5_000 });
    try {
      if (kind === 'client') {
        const connection = await Connection.connect(options);
        try {
          await connection.workflowService.getSystemInfo({});
        } finally {
          await connection.close();
        }
      } else {
        const connection = await NativeConnection.connect(options);
        try {
          await connection.workflowService.getSystemInfo({});
        } finally {
          await connection.close();
        }
      }
      return 'ok';
    } catch (err) {
      // The client wraps a failed first call ("Failed to connect"); its cause says why.
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      return cause ? `${(err as Error).message}: ${cause}` : (err as Error).message;
    }
  }

  it('plaintext to the proxy gets nowhere: it really speaks TLS', async () => {
    assert.notEqual(await systemInfo('client', { TEMPORAL_TLS: 'false' }), 'ok');
  });

  for (const kind of ['client', 'worker'] as const) {
    it(`${kind} connection: with the client certificate, the CA and the server name it reaches the server`, async () => {
      assert.equal(await systemInfo(kind, mtls()), 'ok');
    });

    it(`${kind} connection: today's names reach it too`, async () => {
      assert.equal(await systemInfo(kind, legacyMtls()), 'ok');
    });

    it(`${kind} connection: without the client certificate the server refuses it`, async () => {
      const refusedBefore = proxy.refused.length;
      const rest: Record<string, string> = mtls();
      delete rest.TEMPORAL_TLS_CLIENT_CERT_PATH;
      delete rest.TEMPORAL_TLS_CLIENT_KEY_PATH;
      assert.notEqual(await systemInfo(kind, rest), 'ok');
      assert.match(proxy.refused.slice(refusedBefore).join('; '), /certificate/i, 'the server side refused the handshake for want of a certificate');
    });

    it(`${kind} connection: without the CA the client refuses the server's certificate`, async () => {
      const rest: Record<string, string> = mtls();
      delete rest.TEMPORAL_TLS_SERVER_CA_CERT_PATH;
      assert.match(await systemInfo(kind, rest), /certificate|UnknownIssuer|unknown ?issuer|connect/i);
    });
  }

  describe('API key (TEMPORAL_API_KEY_FILE): sent as a bearer token over TLS', () => {
    let keyProxy: GrpcAuthProxy;
    const API_KEY = 'test-api-key-4f1c';
    before(async () => {
      const [host, port] = shared.temporal.address.split(':');
      keyProxy = await startGrpcAuthProxy(pki, { host: host!, port: Number(port) }, API_KEY);
      fs.writeFileSync(path.join(dir, 'api-key'), `${API_KEY}\n`, { mode: 0o600 });
      fs.writeFileSync(path.join(dir, 'wrong-key'), 'not-the-key\n', { mode: 0o600 });
    });
    after(async () => keyProxy?.close());
    const keySettings = (file: string) => ({ TEMPORAL_ADDRESS: keyProxy.address, TEMPORAL_API_KEY_FILE: path.join(dir, file), TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caFile, TEMPORAL_TLS_SERVER_NAME: SERVER_NAME });

    for (const kind of ['client', 'worker'] as const) {
      it(`${kind} connection: the key from the file reaches the server as a bearer token; a wrong key is refused`, async () => {
        const seenBefore = keyProxy.authorizations.length;
        assert.equal(await systemInfo(kind, keySettings('api-key')), 'ok');
        assert.ok(keyProxy.authorizations.slice(seenBefore).every((a) => a === `Bearer ${API_KEY}`) && keyProxy.authorizations.length > seenBefore, 'every call carried the key');
        assert.match(await systemInfo(kind, keySettings('wrong-key')), /missing or wrong API key|unauthenticated|UNAUTHENTICATED/i);
      });
    }
  });
});
