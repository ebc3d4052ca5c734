import type { RelaySessionOutput } from './types';

/**
 * How a relay session ends. The first reason given is the one its output reports; from then on
 * `signal` is aborted, and whatever the session waits on (the lock, the drain grace, a back-off)
 * stops waiting. The session's loop finishes its batch and returns.
 */
export class SessionEnding {
  private readonly controller = new AbortController();

  constructor(private readonly out: RelaySessionOutput) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get ended(): boolean {
    return this.controller.signal.aborted;
  }

  end(why: RelaySessionOutput['ended']): void {
    if (this.ended) return;
    this.out.ended = why;
    this.controller.abort();
  }
}
