import assert from 'node:assert/strict';
import { DEV_DB_WARNING_BYTES, largeDevDbWarning } from '../../tools/local-stack/temporal';

describe('the dev server database size warning at stack up', () => {
  it('stays quiet below 1 GiB and names the size and the files above it', () => {
    assert.equal(largeDevDbWarning(DEV_DB_WARNING_BYTES - 1, '/c/temporal/dev.db'), undefined);
    const said = largeDevDbWarning(1.87 * 1024 ** 3, '/c/temporal/dev.db');
    assert.match(said ?? '', /is 1\.87 GiB \(\/c\/temporal\/dev\.db\*\)/);
    assert.match(said ?? '', /`npm run stack:down` and delete those files/);
  });
});
