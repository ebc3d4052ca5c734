import path from 'node:path';
import { isNodeLine, nodeBinary } from '../local-stack/node-release';
import { cachePaths } from '../local-stack/paths';
import { loadStackConfig } from '../local-stack/stack-config';

// `npx tsx tools/scripts/node-bin-dir.ts 24`: provisions that Node line from its sha256-pinned
// PyPI wheel into the cache (tools/local-stack/node-release.ts) and prints the folder holding its
// `node`, for PATH. CI puts it first on PATH and runs the README's `npm test` as written, so npm,
// tsx, mocha and every process a test spawns run on that line.

const line = process.argv[2] ?? '';
if (!isNodeLine(line)) {
  process.stderr.write(`usage: node-bin-dir.ts <22|24>\n`);
  process.exit(2);
}
const node = nodeBinary(line, cachePaths(loadStackConfig().local.cacheDir), (m) => process.stderr.write(`[node] ${m}\n`));
process.stdout.write(`${path.dirname(node)}\n`);
