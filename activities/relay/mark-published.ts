import type { RelayActivityDeps } from './deps';
import { createSharedRoundTrips } from './shared-round-trips';
import type { MarkPublishedInput, MarkPublishedOutput } from './types';

export function createMarkPublished({ pool, producer, config, roundTrips = createSharedRoundTrips(pool, producer, config) }: RelayActivityDeps) {
  return async function markPublished(input: MarkPublishedInput): Promise<MarkPublishedOutput> {
    return { marked: await roundTrips.markPublished(input.ids) };
  };
}
