import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../config/env';

/**
 * Bundles workflow code with webpack in a short-lived child process and returns the code.
 * Bundling in the worker's own process costs ~100 MB of heap that a long-lived worker never
 * gives back (measured on the consumer: 316 MB RSS idle with in-process bundling, 232 MB without);
 * the worker only needs the resulting code.
 */
export async function bundleInChildProcess(cacheDir: string, workflowsPath: string): Promise<string> {
  const dir = path.join(cacheDir, 'workflow-bundles');
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `${path.basename(workflowsPath, path.extname(workflowsPath))}-${process.pid}-${Date.now()}.js`);
  const script = `require('@temporalio/worker').bundleWorkflowCode({ workflowsPath: ${JSON.stringify(workflowsPath)} })
    .then((b) => require('node:fs').writeFileSync(${JSON.stringify(out)}, b.code))
    .catch((e) => { console.error(e); process.exit(1); });`;
  await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: PROJECT_ROOT, maxBuffer: 16 * 1024 * 1024 });
  try {
    return fs.readFileSync(out, 'utf8');
  } finally {
    fs.rmSync(out, { force: true });
  }
}
