import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import type { ISocketFactory } from 'kafkajs';
import { SocketFence } from '../../workers/consumer/socket-fence';

// A consumer that stepped aside must not reach the broker again (docs/guarantees.md#stepping-aside):
// after the fence, the connections it had are closed and every new one fails at once.
describe('consumer socket fence', () => {
  let server: net.Server;
  let port: number;
  const accepted: net.Socket[] = [];

  before(async () => {
    server = net.createServer((s) => accepted.push(s));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as net.AddressInfo).port;
  });
  after(async () => {
    for (const s of accepted) s.destroy();
    server.close();
    await once(server, 'close');
  });

  const plain: ISocketFactory = ({ host, port: p, onConnect }) => net.connect({ host, port: p }, onConnect);

  it('closes the connections open at the fence and fails every later one without connecting', async () => {
    const fence = new SocketFence();
    const factory = fence.wrap(plain);
    const first = factory({ host: '127.0.0.1', port, ssl: {}, onConnect: () => undefined });
    await once(first, 'connect');
    const acceptedBefore = accepted.length;

    fence.fence();
    assert.equal(fence.closed, true);
    assert.equal(first.destroyed, true, 'the open connection is closed');

    const later = factory({ host: '127.0.0.1', port, ssl: {}, onConnect: () => assert.fail('a fenced member must not connect') });
    const [err] = (await once(later, 'error')) as [Error];
    assert.match(err.message, /stepped aside/);
    assert.equal(accepted.length, acceptedBefore, 'nothing reached the server after the fence');
  });
});
