#!/usr/bin/env node
import { ConfigError } from '../config/env';
import { buildProgram } from './program';

buildProgram().parseAsync(process.argv).catch((err: unknown) => {
  // Known problems print one sentence that names the fix; anything else keeps its stack trace.
  if (err instanceof ConfigError) process.stderr.write(`error: ${err.message}\n`);
  else process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
