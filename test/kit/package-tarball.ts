import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/config/env';

const run = promisify(execFile);
export const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
export const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

export interface PackedTarball {
  /** Absolute path of the .tgz. */
  file: string;
  /** Paths inside the package, as npm pack lists them. */
  files: string[];
}

let packed: Promise<PackedTarball> | undefined;

/**
 * The package as a user gets it: `npm pack` (its prepack builds dist/). Packing takes most of a
 * minute, so every test of one mocha run shares one tarball; it is removed when the run exits.
 */
export function packedTarball(): Promise<PackedTarball> {
  packed ??= pack();
  return packed;
}

async function pack(): Promise<PackedTarball> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-tarball-'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', dir], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 });
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  return { file: path.join(dir, info!.filename), files: info!.files.map((f) => f.path) };
}

/**
 * Writes `packageJson` into `dir` and installs the tarball there with whatever else it lists
 * (`npm install` from the registry, cache first), as a service adding the package would.
 */
export async function installTarball(dir: string, tarball: PackedTarball, packageJson: Record<string, unknown>): Promise<void> {
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(packageJson, null, 2));
  await run(npm, ['install', tarball.file, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
}
