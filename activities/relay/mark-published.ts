import { markPublished as markPublishedRows } from '../../outbox/queries/mark-published';
import type { RelayActivityDeps } from './deps';
import type { MarkPublishedInput, MarkPublishedOutput } from './types';

export function createMarkPublished({ pool }: RelayActivityDeps) {
  return async function markPublished(input: MarkPublishedInput): Promise<MarkPublishedOutput> {
    return { marked: await markPublishedRows(pool, input.ids) };
  };
}
