import crypto from 'node:crypto';

/** A short unique suffix, so every test gets its own database, topic, task queue and workflow ids. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}`;
}
