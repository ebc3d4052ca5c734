import { markPublished as markPublishedRows } from '../../outbox/queries/mark-published';
import type { RelayActivityDeps } from './deps';
import { faultPoint } from './fault-points';
import type { MarkPublishedInput, MarkPublishedOutput } from './types';

export function createMarkPublished({ pool, config }: RelayActivityDeps) {
  return async function markPublished(input: MarkPublishedInput): Promise<MarkPublishedOutput> {
    await faultPoint(config, 'before-mark', { ids: input.ids.length, firstId: input.ids[0] });
    return { marked: await markPublishedRows(pool, input.ids) };
  };
}
