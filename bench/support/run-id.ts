import crypto from 'node:crypto';

/** A name unique to this benchmark run (topics, task queues, workflow ids), readable by prefix. */
export const runId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}`;
