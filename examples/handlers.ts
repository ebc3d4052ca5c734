import type { Config } from '../src/config/env';
import type { AnyEventHandler } from '../src/inbox/handler';
import type { AuditCheck } from '../src/audit/check';
import { paymentsAuditChecks } from './payments/audit-checks';
import { paymentConfirmedHandler } from './payments/credit-handler';
import { orderShippedHandler } from './shipping/order-shipped-handler';

/** The example handlers the built-in consumer worker registers, chosen by CONSUMER_HANDLERS. */
export function exampleHandlers(config: Config): AnyEventHandler[] {
  return config.consumer.handlers.map((name) => {
    switch (name) {
      case 'payment_confirmed':
        return paymentConfirmedHandler({ maxCreditAmount: config.consumer.maxCreditAmount });
      case 'order_shipped':
        return orderShippedHandler();
    }
  });
}

/** The example's audit checks the built-in retention worker runs: the payments ones when its handler is configured. */
export function exampleAuditChecks(config: Config): readonly AuditCheck[] {
  return config.consumer.handlers.includes('payment_confirmed') ? paymentsAuditChecks : [];
}
