import { defineAuditCheck, type AuditCheck, type AuditCheckContext, type AuditFinding, type SqlExecutor } from 'temporal-outbox';
import { PAYMENT_CONFIRMED } from './event-types';
import { balanceMismatches } from './queries/balance-mismatches';
import { ledgerGaps, type LedgerGapKind, type LedgerGapRow } from './queries/ledger-gaps';

// The payments example's own invariants, proved by every reconciliation run beside the library's
// delivery proof (docs/audit.md): what the credit handler did, as its ledger records it.

/** Every balance = its opening balance + the sum of its applied credits. */
export const balanceInvariantCheck: AuditCheck = defineAuditCheck({
  name: 'balanceMismatches',
  description: 'payments: balance = opening balance + sum of applied credits',
  async run(db, { maxListed }) {
    const r = await balanceMismatches(db, maxListed);
    return {
      checked: r.accounts,
      findings: {
        count: r.mismatched,
        listed: r.listed.map((m) => ({
          key: `account:${m.accountId}`,
          message: `account ${m.accountId}: balance ${m.balance} but opening balance + applied credits = ${m.expected} (difference ${m.difference})`,
          detail: { ...m },
        })),
      },
    };
  },
});

const LEDGER_MESSAGES: Record<LedgerGapKind, (r: LedgerGapRow, consumer: string) => string> = {
  inboxRowMissing: (r, consumer) => `event ${r.eventId} applied (${r.appliedAmount} to account ${r.appliedAccountId}) but missing from ${consumer}'s inbox: a redelivery would apply it again`,
  appliedDiffers: (r, consumer) =>
    `event ${r.eventId} applied by ${consumer} as ${r.appliedAmount} to account ${r.appliedAccountId}, published as ${r.amount} to ${r.accountId}`,
};

/** The ledger's credits of the audited consumers that handle payment_confirmed, held against `kind`. */
async function ledgerCheck(db: SqlExecutor, { window, consumers, maxListed }: AuditCheckContext, kind: LedgerGapKind) {
  let checked = 0;
  let count = 0;
  const listed: AuditFinding[] = [];
  for (const c of consumers.filter((x) => x.eventTypes.includes(PAYMENT_CONFIRMED))) {
    const r = await ledgerGaps(db, { consumer: c.consumer, eventTypes: [PAYMENT_CONFIRMED], from: window.from, to: window.to, kind, maxListed });
    checked += r.checked;
    count += r.found;
    for (const row of r.listed) {
      if (listed.length < maxListed) listed.push({ key: `event:${row.eventId}`, message: LEDGER_MESSAGES[kind](row, c.consumer), detail: { consumer: c.consumer, ...row } });
    }
  }
  return { checked, findings: { count, listed } };
}

export const inboxRowMissingCheck: AuditCheck = defineAuditCheck({
  name: 'inboxRowMissing',
  description: 'payments: every ledgered credit keeps its inbox row (else a redelivery credits it again)',
  run: (db, context) => ledgerCheck(db, context, 'inboxRowMissing'),
});

export const appliedDiffersCheck: AuditCheck = defineAuditCheck({
  name: 'appliedDiffers',
  description: 'payments: every ledgered credit has the account and amount its event was published with',
  run: (db, context) => ledgerCheck(db, context, 'appliedDiffers'),
});

/** The example's checks, in the order a run reports them. */
export const paymentsAuditChecks: readonly AuditCheck[] = [inboxRowMissingCheck, appliedDiffersCheck, balanceInvariantCheck];
