import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTES } from '../../src/config/constants';
import { statusMarkdown, type RelayCounters, type RelayStatus } from './status';

const SHARD = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayShard.name, SearchAttributeType.INT);
const PUBLISHED = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayPublished.name, SearchAttributeType.INT);
const PENDING = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayPending.name, SearchAttributeType.INT);
const STATUS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayStatus.name, SearchAttributeType.KEYWORD);

// Each upsert is one history event; refresh the counters every few batches, state at once.
const SEARCH_ATTRIBUTE_EVERY_BATCHES = 10;

export type ReportStatus = (state: RelayStatus['state'], force?: boolean) => void;

/**
 * Shows the shard's `status` in the UI: its current details whenever something a reader sees
 * changed, and its search attributes (one history event each) when its state changes, every few
 * batches, or when `force`d.
 */
export function statusReporter(shardIndex: number, counters: RelayCounters, status: RelayStatus): ReportStatus {
  let lastUpsert = { state: '', published: -1, pending: -2 };
  let lastDetailsWorker: string | undefined;
  return (state, force = false) => {
    Object.assign(status, counters, { state, updatedAt: new Date().toISOString() });
    const changed = state !== lastUpsert.state || status.published !== lastUpsert.published || (status.pending ?? -1) !== lastUpsert.pending || status.worker !== lastDetailsWorker;
    if (!changed) return;
    setCurrentDetails(statusMarkdown(status));
    lastDetailsWorker = status.worker;
    if (force || state !== lastUpsert.state || status.batchesThisRun % SEARCH_ATTRIBUTE_EVERY_BATCHES === 0) {
      upsertSearchAttributes([
        { key: SHARD, value: shardIndex },
        { key: PUBLISHED, value: status.published },
        { key: PENDING, value: status.pending ?? 0 },
        { key: STATUS, value: state },
      ]);
      lastUpsert = { state, published: status.published, pending: status.pending ?? -1 };
    }
  };
}
