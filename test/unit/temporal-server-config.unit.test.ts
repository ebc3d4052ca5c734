import assert from 'node:assert/strict';
import { allPorts, HISTORY_SHARDS, temporalServerConfig, temporalServerPorts } from '../../tools/local-stack/temporal-server/server-config';

describe('Temporal server config (TEMPORAL_SERVER=postgres)', () => {
  const database = { host: '127.0.0.1', port: 54329, user: 'outbox' };

  it('lays the four services out around the frontend port as Temporal\'s samples do around 7233', () => {
    const ports = temporalServerPorts(7233);
    assert.deepEqual(ports, {
      frontend: { grpc: 7233, membership: 6933, http: 7243 },
      history: { grpc: 7234, membership: 6934 },
      matching: { grpc: 7235, membership: 6935 },
      worker: { grpc: 7239, membership: 6939 },
    });
    assert.equal(new Set(allPorts(ports)).size, 9, 'nine distinct ports');
  });

  it('puts history and visibility on PostgreSQL with several history shards', () => {
    const config = temporalServerConfig({ frontendPort: 7233, database, dynamicConfigFile: '/x/dynamic-config.yaml' });
    assert.equal(config.persistence.numHistoryShards, HISTORY_SHARDS);
    assert.ok(HISTORY_SHARDS > 1);
    const { defaultStore, visibilityStore, datastores } = config.persistence;
    const stores = datastores as Record<string, { sql: Record<string, unknown> }>;
    assert.equal(stores[defaultStore]!.sql.pluginName, 'postgres12');
    assert.equal(stores[defaultStore]!.sql.databaseName, 'temporal');
    assert.equal(stores[visibilityStore]!.sql.pluginName, 'postgres12');
    assert.equal(stores[visibilityStore]!.sql.databaseName, 'temporal_visibility');
    assert.equal(stores[defaultStore]!.sql.connectAddr, '127.0.0.1:54329');
    assert.equal(config.publicClient.hostPort, '127.0.0.1:7233');
    assert.equal(config.services.frontend?.rpc.bindOnIP, '127.0.0.1');
  });

  it('writes a password only when there is one', () => {
    const without = temporalServerConfig({ frontendPort: 7233, database, dynamicConfigFile: '/x' });
    assert.ok(!('password' in without.persistence.datastores['postgres-default'].sql));
    const withPassword = temporalServerConfig({ frontendPort: 7233, database: { ...database, password: 's3cret' }, dynamicConfigFile: '/x' });
    assert.equal((withPassword.persistence.datastores['postgres-default'].sql as { password?: string }).password, 's3cret');
  });
});
