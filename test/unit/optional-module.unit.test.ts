import assert from 'node:assert/strict';
import { optionalModule, requiredModule } from '../../src/observability/optional-module';

// The tracing SDK, exporter and Temporal's OpenTelemetry interceptors are optional peers: absent,
// tracing that needs them stops with the package's name and the command that installs it.
describe('optional peer dependencies', () => {
  it('an installed one loads; a missing one is undefined', () => {
    assert.equal(typeof optionalModule<{ trace: unknown }>('@opentelemetry/api')?.trace, 'object');
    assert.equal(optionalModule('@opentelemetry/not-a-package-of-ours'), undefined);
  });

  it('a missing required one names the package and the npm install command', () => {
    assert.throws(
      () => requiredModule('@opentelemetry/not-a-package-of-ours', '@opentelemetry/not-a-package-of-ours', 'exporting OpenTelemetry traces'),
      /exporting OpenTelemetry traces needs the package @opentelemetry\/not-a-package-of-ours, which is not installed: run `npm install @opentelemetry\/not-a-package-of-ours` in your service/,
    );
  });

  it('a module that is there but fails to load is not mistaken for a missing one', () => {
    // A subpath the package's `exports` does not export: a different error, passed through.
    assert.throws(() => optionalModule('@opentelemetry/api/package-that-is-not-exported'), (err: NodeJS.ErrnoException) => err.code !== 'MODULE_NOT_FOUND');
  });
});
