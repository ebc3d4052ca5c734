import fs from 'node:fs';
import path from 'node:path';
import { StackError } from '../errors';
import type { CachePaths } from '../paths';
import { hasCommand } from '../toolchain';
import { goInstallInto } from '../temporal-server/build';

// Temporal's Web UI for the cluster: the same UI the dev server embeds, served by its own Go
// module. The module ships the built UI assets embedded, so `go install` alone makes a working
// UI server; the version is the one the pinned Temporal CLI embeds (CLI 1.9.1 = UI 2.54.1).

export const UI_SERVER_BUILD = { module: 'github.com/temporalio/ui-server/v2', package: 'cmd/server', version: '2.54.1' } as const;

export function uiServerBinary(paths: CachePaths): string {
  // `go install` names the binary after its package folder.
  return path.join(paths.bin, `temporal-ui-server-v${UI_SERVER_BUILD.version}`, path.basename(UI_SERVER_BUILD.package));
}

export function ensureUiServerBinary(paths: CachePaths, log: (m: string) => void): string {
  const binary = uiServerBinary(paths);
  if (fs.existsSync(binary)) return binary;
  if (!hasCommand('go')) throw new StackError(`TEMPORAL_SERVER=cluster builds Temporal's UI server ${UI_SERVER_BUILD.version} with Go, which is not on PATH: install Go 1.26.5+`);
  const { module, version } = UI_SERVER_BUILD;
  goInstallInto(paths, { what: `Temporal's UI server ${version}`, dir: path.dirname(binary), specs: [`${module}/${UI_SERVER_BUILD.package}@v${version}`], log });
  return binary;
}

/** The UI server's configuration: its file format's fields, written as JSON (which is YAML). */
export function uiServerConfig(input: { temporalAddress: string; port: number; namespace: string }) {
  return {
    temporalGrpcAddress: input.temporalAddress,
    host: '127.0.0.1',
    port: input.port,
    enableUi: true,
    defaultNamespace: input.namespace,
    // As the dev server's UI: local, no sign-in, no news fetched from the internet.
    auth: { enabled: false },
    disableNewsFetch: true,
  };
}

/** The config folder and file name (`<env>.yaml`) the UI server reads with `--root … --env …`. */
export const UI_SERVER_ENV = 'outbox';
