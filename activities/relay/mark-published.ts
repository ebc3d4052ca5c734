import type { RelayStepDeps } from './deps';
import type { MarkPublishedInput, MarkPublishedOutput } from './types';

export function createMarkPublished({ roundTrips }: RelayStepDeps) {
  return async function markPublished(input: MarkPublishedInput): Promise<MarkPublishedOutput> {
    return { marked: await roundTrips.markPublished(input.ids) };
  };
}
