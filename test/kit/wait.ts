import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` every `everyMs` until it returns true; fails after `timeoutMs` naming `what`, so
 * a timed-out test says which outcome never came.
 */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 90_000, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
