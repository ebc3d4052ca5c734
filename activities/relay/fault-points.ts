import type { Config } from '../../config/env';

export type FaultPoint = NonNullable<Config['relay']['faultPauseAt']>;

/**
 * Fault-injection hook for the crash tests (RELAY_FAULT_PAUSE_AT; unset in production, where
 * this is a no-op). At the named point the worker announces itself on stderr and then never
 * continues, so the test can `kill -9` the process exactly there: e.g. after Kafka acknowledged
 * a batch but before Temporal learned that the activity finished — the at-least-once gap.
 * A pause rather than a self-kill keeps the kill in the test's hands, as a real crash would be.
 */
export async function faultPoint(config: Config, point: FaultPoint, detail: Record<string, unknown>): Promise<void> {
  if (config.relay.faultPauseAt !== point) return;
  process.stderr.write(`RELAY_FAULT_POINT ${JSON.stringify({ point, pid: process.pid, ...detail })}\n`);
  await new Promise<never>(() => undefined);
}
