import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../config/constants';
import type { EventBatch } from '../../workflows/inbox/contract';

// What makes an applyEventsWorkflow run findable in the Temporal UI without opening it: its
// inbox, the Kafka topics and partitions it covers and the lowest/highest offset among them. Set
// when the workflow starts (no extra history event). An applied event's topic, partition and
// offset are on its inbox row, so `outbox inbox find --event-id X` turns an event id into the
// list query (docs/consumer.md). Topics are all of the batch's (KeywordList), not the first: a run
// mixing topics must be found from an event of any of them. Offsets are Doubles because the dev
// server's three custom Int attributes belong to the relay; they are exact up to 2^53. Offsets
// and partitions are pooled over the batch's topics: the query may list a run that holds the
// partition/offset on another topic, and the run's input tells (src/inbox/find-event-workflows.ts).

const CONSUMER = defineSearchAttributeKey(SEARCH_ATTRIBUTES.consumerName.name, SearchAttributeType.KEYWORD);
const TOPICS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.consumerTopics.name, SearchAttributeType.KEYWORD_LIST);
const PARTITIONS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.consumerPartitions.name, SearchAttributeType.KEYWORD_LIST);
const OFFSET_MIN = defineSearchAttributeKey(SEARCH_ATTRIBUTES.consumerOffsetMin.name, SearchAttributeType.DOUBLE);
const OFFSET_MAX = defineSearchAttributeKey(SEARCH_ATTRIBUTES.consumerOffsetMax.name, SearchAttributeType.DOUBLE);

/** The partition's search value: `p3`, as in the workflow id's spans. */
export const partitionKey = (partition: number) => `p${partition}`;

export function applySearchAttributes(batch: EventBatch): SearchAttributePair[] {
  const offsets = batch.offsets.map(Number);
  const partitions = [...new Set(batch.partitions)].sort((a, b) => a - b).map(partitionKey);
  return [
    { key: CONSUMER, value: batch.consumer },
    { key: TOPICS, value: [...new Set(batch.topics)].sort() },
    { key: PARTITIONS, value: partitions },
    // reduce, not Math.min(...offsets): spreading a large batch could hit the argument-count limit.
    { key: OFFSET_MIN, value: offsets.length ? offsets.reduce((a, b) => Math.min(a, b)) : 0 },
    { key: OFFSET_MAX, value: offsets.length ? offsets.reduce((a, b) => Math.max(a, b)) : 0 },
  ];
}

/**
 * The visibility query listing the applyEventsWorkflow runs that may hold the event at `topic` /
 * `partition` / `offset`: every one that does, plus any that spans that topic and partition and,
 * on another partition or topic, that offset range (the run's input tells them apart).
 */
export function applyWorkflowsQuery(consumer: string, topic: string, partition: number, offset: number): string {
  return [
    `${SEARCH_ATTRIBUTES.consumerName.name} = '${consumer.replace(/'/g, "''")}'`,
    `${SEARCH_ATTRIBUTES.consumerTopics.name} = '${topic.replace(/'/g, "''")}'`,
    `${SEARCH_ATTRIBUTES.consumerPartitions.name} = '${partitionKey(partition)}'`,
    `${SEARCH_ATTRIBUTES.consumerOffsetMin.name} <= ${offset}`,
    `${SEARCH_ATTRIBUTES.consumerOffsetMax.name} >= ${offset}`,
  ].join(' AND ');
}
