import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../src/config/constants';
import { cachePaths } from '../../tools/local-stack/paths';
import { runningPid } from '../../tools/local-stack/processes';
import { stackDown } from '../../tools/local-stack/stack';
import { ensureTemporal, stopTemporal, TEMPORAL_SERVICE } from '../../tools/local-stack/temporal';
import { uniqueName } from '../kit/ids';
import { isolatedStack } from '../kit/isolated-stack';

// A Temporal dev server of its own (own cache folder and ports, the suite's CLI binary) that this
// test stops and starts again: workflow history lives in the SQLite file and survives, and the
// search attributes are registered on the existing database too.
describe('local Temporal server', function () {
  this.timeout(180_000);
  const stack = isolatedStack();
  const { config } = stack;
  const paths = cachePaths(stack.dir);
  after(async () => {
    await stopTemporal(paths);
    stack.remove();
  });

  async function withClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const connection = await Connection.connect({ address: config.temporal.address });
    try {
      return await work(new Client({ connection, namespace: config.temporal.namespace }));
    } finally {
      await connection.close();
    }
  }

  it('keeps workflow history and search attributes across a restart', async () => {
    assert.equal(await ensureTemporal(config, paths, () => undefined), true);
    const workflowId = uniqueName('persisted');
    // No worker polls this queue: the workflow simply stays open, which is all this test needs.
    await withClient((c) => c.workflow.start('anyWorkflow', { taskQueue: uniqueName('nobody'), workflowId }));

    await stopTemporal(paths);
    assert.equal(await ensureTemporal(config, paths, () => undefined), true, 'started again');

    const described = await withClient((c) => c.workflow.getHandle(workflowId).describe());
    assert.equal(described.status.name, 'RUNNING');
    const attributes = await withClient((c) => c.connection.operatorService.listSearchAttributes({ namespace: config.temporal.namespace }));
    for (const { name } of Object.values(SEARCH_ATTRIBUTES)) assert.ok(name in (attributes.customAttributes ?? {}), `${name} registered`);
  });

  // CI's cluster step runs Temporal's cluster from the suite's cache folder, on ports of its own,
  // while the suite's dev server runs: its `stack run` must stop only the cluster it started.
  it('stops only the configured kind of Temporal when asked to (as `stack run` does), every kind otherwise', async () => {
    await ensureTemporal(config, paths, () => undefined);
    const pid = runningPid(paths.run, TEMPORAL_SERVICE);
    assert.ok(pid, 'the dev server runs');
    const clusterKind = { ...config, temporal: { ...config.temporal, server: 'cluster' as const } };

    assert.deepEqual(await stackDown(clusterKind, ['temporal'], { temporal: 'configured' }), [], 'no cluster ran, so nothing stopped');
    assert.equal(runningPid(paths.run, TEMPORAL_SERVICE), pid, 'the dev server still runs');
    await withClient((c) => c.connection.workflowService.describeNamespace({ namespace: config.temporal.namespace }));

    assert.deepEqual(await stackDown(clusterKind, ['temporal']), ['temporal'], '`stack down temporal` stops every kind');
    assert.equal(runningPid(paths.run, TEMPORAL_SERVICE), undefined);
  });
});
