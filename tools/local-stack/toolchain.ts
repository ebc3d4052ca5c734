import fs from 'node:fs';
import path from 'node:path';
import { StackError } from './errors';

/** Looks a command up on PATH the way a shell would, without spawning one. */
export function hasCommand(command: string, searchPath = process.env.PATH ?? ''): boolean {
  return searchPath
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        fs.accessSync(path.join(dir, command), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/** Stops with one sentence naming the missing tool and how to get it. */
export function requireCommand(command: string, howToGetIt: string) {
  if (!hasCommand(command)) throw new StackError(`\`${command}\` was not found on PATH. ${howToGetIt}`);
}
