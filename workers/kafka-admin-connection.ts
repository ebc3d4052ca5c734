import type { Admin, Kafka } from 'kafkajs';
import type { ProbeConnection } from './kept-connection-probe';

/**
 * An admin client of its own as a kept probe connection (workers/kept-connection-probe.ts), with
 * the worker's client settings (and routes) and no retries inside kafkajs: one call, one request,
 * bounded by the client's request timeout or the caller. A failed client is let go without
 * waiting (its disconnect would wait on the dead link).
 */
export function adminConnection<R>(kafka: Kafka, check: (admin: Admin) => Promise<R>): ProbeConnection<Admin, R> {
  const letGo = (admin: Admin) => void admin.disconnect().catch(() => undefined);
  return {
    open: async () => {
      const admin = kafka.admin({ retry: { retries: 0 } });
      try {
        await admin.connect();
      } catch (err) {
        letGo(admin);
        throw err;
      }
      return admin;
    },
    check,
    discard: letGo,
    release: (admin) => admin.disconnect(),
  };
}
