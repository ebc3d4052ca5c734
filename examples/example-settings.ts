// The payments and shipping example's own names for what the library leaves to each service: its
// topic and dead-letter topic, its consumer group and inbox, and the inboxes its audit checks. A
// service of its own sets these in its environment (or options); the example's worker entries,
// the repository's CLI, the local stack's tools and the tests apply them here, wherever the
// environment names none, so the demo behaves as it always has.

/** The example's settings, as the environment variables the library reads. */
export const EXAMPLE_SETTINGS = {
  KAFKA_TOPIC: 'payments.events',
  KAFKA_DEAD_LETTER_TOPIC: 'payments.events.dlq',
  CONSUMER_GROUP: 'payments-credit',
  INBOX_CONSUMER: 'payments-credit',
} as const;

/** The example consumer's handlers when CONSUMER_HANDLERS names none (examples/payments/consumer-worker.ts). */
export const EXAMPLE_DEFAULT_HANDLERS = 'payment_confirmed';

/** `env` with the example's names (EXAMPLE_SETTINGS) wherever it sets none; an empty value counts as unset. */
export function withExampleNames(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of Object.entries(EXAMPLE_SETTINGS)) out[name] ||= value;
  return out;
}

/**
 * `env` with the example's names, and AUDIT_CONSUMERS (unless set) derived from the handlers the
 * example's consumer registers: its inbox for the event types CONSUMER_HANDLERS names. For a
 * process that loads its configuration from `env` as it is now; a process that starts others with
 * their own INBOX_CONSUMER (the test run) takes withExampleNames, and each child derives its own.
 */
export function withExampleSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = withExampleNames(env);
  const handlers = (out.CONSUMER_HANDLERS || EXAMPLE_DEFAULT_HANDLERS).split(',').map((n) => n.trim()).filter(Boolean);
  out.AUDIT_CONSUMERS ||= `${out.INBOX_CONSUMER}=${handlers.join('|')}`;
  return out;
}
