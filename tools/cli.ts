import { ConfigError } from '../src/config/env';
import { buildProgram } from '../src/cli/program';
import { registerDemoCommand } from '../examples/payments/demo/demo-command';
import { registerTrafficCommand } from '../examples/payments/demo/traffic-command';
import { withExampleSettings } from '../examples/example-settings';
import { registerExampleSetupCommand } from '../examples/setup-command';
import { StackError } from './local-stack/errors';
import { registerStackCommands } from './local-stack/stack-command';
import { localStackEnv } from './local-stack/stack-config';

// The repository's own CLI: the package's commands plus what only a checkout has (the local stack
// provisioned into .cache/, and the payments example's demo and traffic). `npm start`, `npm test`
// and the stack scripts run it; an installed package ships only src/cli.
// The library reads only the environment: the local stack's services, wherever none are named,
// are set here, before any command reads them (and every process a command starts inherits them),
// with the example's topic, group and inbox names (examples/example-settings.ts): the checkout's
// CLI runs the example, as the library's defaults are neutral.
Object.assign(process.env, withExampleSettings(localStackEnv(process.env)));

const program = buildProgram().name('outbox');
registerStackCommands(program);
registerDemoCommand(program);
registerTrafficCommand(program);
registerExampleSetupCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  // Known problems print one sentence that names the fix; anything else keeps its stack trace.
  if (err instanceof StackError || err instanceof ConfigError) process.stderr.write(`error: ${err.message}\n`);
  else process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
