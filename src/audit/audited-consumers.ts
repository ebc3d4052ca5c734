import { ConfigError } from '../config/errors';
import type { Config } from '../config/env';
import type { AuditedConsumer } from './types';

/** Why the audit cannot run without its consumers, naming the setting that gives them. */
export const NO_AUDITED_CONSUMERS =
  'AUDIT_CONSUMERS (audit.consumers) is not set: name each inbox and the event types it must hold, as consumer=type|type,... ' +
  '(e.g. billing=invoice_paid); there is no default, as only the service knows which inbox applies which event types';

/** The consumers the audit checks; throws a ConfigError naming the setting when there are none. */
export function auditedConsumers(config: Config): AuditedConsumer[] {
  if (config.audit.consumers.length === 0) throw new ConfigError([NO_AUDITED_CONSUMERS]);
  return config.audit.consumers;
}
