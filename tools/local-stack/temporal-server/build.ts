import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { StackError } from '../errors';
import type { CachePaths } from '../paths';
import { hasCommand } from '../toolchain';

// Temporal's own server and its SQL schema tool, built once with `go install` into the cache.
// The version is the one the pinned Temporal CLI embeds (CLI 1.9.1 = server 1.32.0), so the dev
// server and this one speak of the same Temporal. Its go.mod has no replace directive and asks for
// Go 1.26.8; the SQL schemas ship embedded in the tool (`--schema-name`), so no file of the module
// has to outlive the build.

export const TEMPORAL_SERVER_BUILD = {
  module: 'go.temporal.io/server',
  version: '1.32.0',
  serverPackage: 'cmd/server',
  sqlToolPackage: 'cmd/tools/sql',
} as const;

export interface TemporalServerBinaries {
  dir: string;
  server: string;
  sqlTool: string;
}

/** One folder per version: a version bump builds anew instead of running a stale binary. */
export function temporalServerBinaries(paths: CachePaths, version: string = TEMPORAL_SERVER_BUILD.version): TemporalServerBinaries {
  const dir = path.join(paths.bin, `temporal-server-v${version}`);
  // `go install` names each binary after its package folder.
  return { dir, server: path.join(dir, path.basename(TEMPORAL_SERVER_BUILD.serverPackage)), sqlTool: path.join(dir, path.basename(TEMPORAL_SERVER_BUILD.sqlToolPackage)) };
}

/** The server and SQL tool binaries, built into the cache on first use and reused after. */
export function ensureTemporalServerBinaries(paths: CachePaths, log: (m: string) => void): TemporalServerBinaries {
  const binaries = temporalServerBinaries(paths);
  if (fs.existsSync(binaries.server) && fs.existsSync(binaries.sqlTool)) return binaries;
  if (!hasCommand('go')) {
    throw new StackError(
      `TEMPORAL_SERVER=postgres and TEMPORAL_SERVER=cluster build Temporal's server ${TEMPORAL_SERVER_BUILD.version} with Go, which is not on PATH: install Go 1.26.8+ (or unset TEMPORAL_SERVER to use the dev server, or set TEMPORAL_ADDRESS to your own server)`,
    );
  }
  const { module, version, serverPackage, sqlToolPackage } = TEMPORAL_SERVER_BUILD;
  goInstallInto(paths, {
    what: `Temporal's server ${version} and its SQL tool`,
    dir: binaries.dir,
    specs: [serverPackage, sqlToolPackage].map((p) => `${module}/${p}@v${version}`),
    log,
  });
  return binaries;
}

/**
 * `go install` of `specs` into `dir`, with module and build caches of its own that are removed
 * afterwards (only the binaries are kept). Built into a side folder and moved in whole: an
 * interrupted build never looks finished.
 */
export function goInstallInto(paths: CachePaths, opts: { what: string; dir: string; specs: string[]; log: (m: string) => void }) {
  opts.log(`building ${opts.what} with \`go install\` (first run only; minutes, and several GB of Go caches removed afterwards)`);
  const partial = `${opts.dir}.partial`;
  const goCaches = path.join(paths.root, `go-${path.basename(opts.dir)}`);
  const env = {
    ...process.env,
    GOBIN: partial,
    GOMODCACHE: path.join(goCaches, 'mod'),
    GOCACHE: path.join(goCaches, 'build'),
  };
  const started = Date.now();
  try {
    fs.rmSync(partial, { recursive: true, force: true });
    // The machine's GOPROXY/GOSUMDB/GOFLAGS pass through untouched.
    execFileSync('go', ['install', ...opts.specs], { stdio: ['ignore', 'pipe', 'pipe'], env, maxBuffer: 64 * 1024 * 1024 });
    fs.rmSync(opts.dir, { recursive: true, force: true });
    fs.renameSync(partial, opts.dir);
  } catch (err) {
    const stderr = `${(err as { stderr?: Buffer }).stderr ?? (err as Error).message}`.trim().split('\n').slice(-8).join('\n');
    throw new StackError(`building ${opts.what} failed:\n${stderr}`);
  } finally {
    removeGoCaches(goCaches, env);
    fs.rmSync(partial, { recursive: true, force: true });
  }
  opts.log(`built ${opts.what} in ${Math.round((Date.now() - started) / 1000)} s (${opts.dir})`);
}

/** Go leaves its module cache read-only; `go clean -modcache` can delete it where a plain rm as non-root cannot. */
function removeGoCaches(goCaches: string, env: NodeJS.ProcessEnv) {
  try {
    execFileSync('go', ['clean', '-modcache'], { stdio: 'ignore', env });
  } catch {
    /* the rm below still takes what it can */
  }
  fs.rmSync(goCaches, { recursive: true, force: true });
}
