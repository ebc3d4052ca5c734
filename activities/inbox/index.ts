import { ApplicationFailure } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { Config } from '../../config/env';
import { applyCredit, type ApplyCreditResult } from '../../inbox/apply-credit';
import { applyCredits, type CreditBatch, type CreditBatchResult } from '../../inbox/apply-credits';
import type { CreditEvent } from '../../inbox/validate-credit-event';
import { recordHandlerCall } from '../../observability/consumer-metrics';

export type { CreditBatch, CreditBatchResult, ApplyCreditResult, CreditEvent };

export interface ApplyCreditInput {
  consumer: string;
  event: CreditEvent;
}

/** A batch whose columns disagree can never succeed: retrying it would only hide a bug. */
export const INVALID_CREDIT_BATCH = 'InvalidCreditBatch';

/**
 * The consumer's activities. Both are idempotent by construction: the inbox row and the credit
 * commit together, so Temporal may retry them (or a redelivered batch may re-run them) freely.
 */
export function createInboxActivities({ pool }: { pool: Pool; config?: Config }) {
  return {
    async applyCredits(batch: CreditBatch): Promise<CreditBatchResult> {
      const n = batch.eventIds.length;
      if (batch.accountIds.length !== n || batch.amounts.length !== n || batch.partitions.length !== n || batch.offsets.length !== n) {
        throw ApplicationFailure.create({
          type: INVALID_CREDIT_BATCH,
          nonRetryable: true,
          message: `credit batch columns differ in length (${n} ids, ${batch.accountIds.length} accounts, ${batch.amounts.length} amounts, ${batch.partitions.length} partitions, ${batch.offsets.length} offsets)`,
        });
      }
      const started = performance.now();
      const result = await applyCredits(pool, batch);
      recordHandlerCall(batch.consumer, n, result, performance.now() - started);
      return result;
    },

    async applyCredit(input: ApplyCreditInput): Promise<ApplyCreditResult> {
      return applyCredit(pool, input.consumer, input.event);
    },
  };
}

export type InboxActivities = ReturnType<typeof createInboxActivities>;
