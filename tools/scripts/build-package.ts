import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundleName } from '../../workers/bundle-workflows';
import { workflowInterceptorModules } from '../../workers/workflow-interceptors';

// `npm run build`: compile to dist/ (JavaScript + .d.ts), copy the SQL migrations beside the
// code that applies them (dist/migrations), and bundle each workflows module once
// (dist/workflow-bundles/<name>.js), so a worker started from the installed package needs
// neither webpack at start-up nor any path of its own.

const root = path.resolve(__dirname, '..', '..');
const dist = path.join(root, 'dist');
const WORKFLOW_MODULES = ['inbox/index.js', 'relay/index.js', 'scheduled.js'];

async function main() {
  fs.rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  fs.cpSync(path.join(root, 'migrations'), path.join(dist, 'migrations'), { recursive: true });
  fs.mkdirSync(path.join(dist, 'workflow-bundles'));
  const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
  // Each twice: plain, and `.traced` with the OpenTelemetry workflow interceptors (workers/workflow-interceptors.ts).
  for (const name of WORKFLOW_MODULES) {
    for (const traced of [false, true]) {
      const workflowsPath = path.join(dist, 'workflows', name);
      const { code } = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: workflowInterceptorModules(traced), logger: quiet });
      fs.writeFileSync(path.join(dist, 'workflow-bundles', `${bundleName(workflowsPath, traced)}.js`), code);
    }
  }
  process.stdout.write(`built ${path.relative(root, dist)}/: JavaScript, declarations, ${fs.readdirSync(path.join(dist, 'migrations')).length} migrations, ${WORKFLOW_MODULES.length * 2} workflow bundles\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`build failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
