import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { withBuildLock } from './build-lock';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { hasCommand } from './toolchain';

// Toxiproxy, the TCP fault proxy the fault tests put between a worker process and a service
// (test/kit/fault-proxy.ts). Built once from source with `go install` into the cache folder and
// reused; each test run starts its own server on a free port, so nothing here runs as a daemon.
// CI builds it in the background (`stack build --with toxiproxy`) while the suite type-checks and
// lints; a fault test that starts meanwhile waits for that build instead of running a second one.

/**
 * The newest release the Go module proxy lists for github.com/Shopify/toxiproxy/v2 (`go list -m
 * -versions`); in it the server is the package cmd/server, whose binary `go install` names `server`.
 */
export const TOXIPROXY_BUILD = { module: 'github.com/Shopify/toxiproxy/v2/cmd/server', version: 'v2.5.0' } as const;

const BINARY = 'toxiproxy-server';

/**
 * Path of the cached toxiproxy-server, building it first when it is missing or of another version.
 * One build at a time: a caller that finds another process building it waits for that build.
 */
export async function toxiproxyServer(paths: CachePaths, log: (m: string) => void): Promise<string> {
  const binary = path.join(paths.bin, BINARY);
  const stamp = `${binary}.version`;
  const built = () => fs.existsSync(binary) && readOr(stamp) === TOXIPROXY_BUILD.version;
  if (built()) return binary;
  return withBuildLock(path.join(paths.go, 'toxiproxy-lock'), 'Toxiproxy', () => (built() ? binary : buildNow(paths, binary, stamp, log)), {
    onWait: () => log('waiting for another process building Toxiproxy'),
  });
}

function buildNow(paths: CachePaths, binary: string, stamp: string, log: (m: string) => void): string {
  if (!hasCommand('go')) {
    throw new StackError(`Go 1.22+ is needed once to build Toxiproxy (the fault tests' TCP proxy): install Go (https://go.dev/doc/install), or put a toxiproxy-server ${TOXIPROXY_BUILD.version} binary at ${binary}`);
  }
  const spec = `${TOXIPROXY_BUILD.module}@${TOXIPROXY_BUILD.version}`;
  log(`building Toxiproxy with \`go install ${spec}\` (first run only, one to two minutes)`);
  // Its own module and build caches, removed afterwards: only the binary is kept. The machine's
  // GOPROXY, GOSUMDB and GOFLAGS pass through untouched.
  const scratch = path.join(paths.go, 'toxiproxy');
  try {
    execFileSync('go', ['install', spec], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GOBIN: path.join(scratch, 'bin'), GOMODCACHE: path.join(scratch, 'mod'), GOCACHE: path.join(scratch, 'build') },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const stderr = `${(err as { stderr?: Buffer }).stderr ?? ''}`.trim().split('\n').slice(-8).join('\n');
    throw new StackError(`building Toxiproxy failed:\n${stderr}`);
  }
  try {
    fs.mkdirSync(paths.bin, { recursive: true });
    fs.renameSync(path.join(scratch, 'bin', 'server'), binary);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  fs.writeFileSync(stamp, `${TOXIPROXY_BUILD.version}\n`);
  return binary;
}

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}
