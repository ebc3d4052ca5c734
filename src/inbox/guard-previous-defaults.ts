import type { Config } from '../config/env';
import { DEFAULTS } from '../config/defaults';
import type { SqlExecutor } from '../db/executor';
import { inboxNamesInUse } from './inbox-names-in-use';

/**
 * Release 0.1's defaults, the payments example's names. A deployment that never set them relied
 * on these; after the upgrade its settings resolve to the neutral defaults instead.
 */
export const PREVIOUS_DEFAULTS = {
  topic: 'payments.events',
  deadLetterTopic: 'payments.events.dlq',
  consumerGroup: 'payments-credit',
  inboxName: 'payments-credit',
} as const;

export class PreviousDefaultsError extends Error {
  override name = 'PreviousDefaultsError';
}

/**
 * Throws when this consumer runs under the new default inbox name while the inbox holds events
 * applied under release 0.1's default and none under the new one: a deployment that upgraded
 * without naming its inbox. Started anyway, it would read from a new group and remember nothing
 * its old inbox applied, so every event still on the topic would be applied a second time.
 */
export async function assertNoPreviousDefaultInbox(db: SqlExecutor, config: Config): Promise<void> {
  const current = config.consumer.inboxName;
  if (current !== DEFAULTS.consumer.inboxName) return;
  const inUse = await inboxNamesInUse(db, [PREVIOUS_DEFAULTS.inboxName, current]);
  if (!inUse.has(PREVIOUS_DEFAULTS.inboxName) || inUse.has(current)) return;
  const p = PREVIOUS_DEFAULTS;
  throw new PreviousDefaultsError(
    `the inbox holds events applied as consumer "${p.inboxName}" (release 0.1's default) and none as "${current}" (the default now): ` +
      `this consumer would apply them again. To keep running as before, set INBOX_CONSUMER=${p.inboxName} CONSUMER_GROUP=${p.consumerGroup} ` +
      `KAFKA_TOPIC=${p.topic} KAFKA_DEAD_LETTER_TOPIC=${p.deadLetterTopic} (or the same options); docs/upgrading.md, "The example's names are no longer defaults"`,
  );
}
