import { spawnSync } from 'node:child_process';
import { StackError } from './errors';

export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Stops with one sentence naming the missing tool and how to get it. */
export function requireCommand(command: string, howToGetIt: string) {
  if (!hasCommand(command)) throw new StackError(`\`${command}\` was not found on PATH. ${howToGetIt}`);
}
