/**
 * True when Kafka refused the records themselves (a protocol error the broker marks
 * non-retriable, such as MESSAGE_TOO_LARGE or INVALID_RECORD), as opposed to the broker being
 * unreachable or slow. Only refusals are pinned on rows; everything else is transient and the
 * whole activity is retried by Temporal.
 */
export function isRecordRejection(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const candidate = e as { name?: string; retriable?: boolean };
    if (candidate.name === 'KafkaJSNumberOfRetriesExceeded') return false;
    if (candidate.name === 'KafkaJSProtocolError' && candidate.retriable === false) return true;
  }
  return false;
}

export function describeError(err: unknown): string {
  const e = err as { name?: string; type?: string; message?: string };
  return `${e?.type ?? e?.name ?? 'Error'}: ${e?.message ?? String(err)}`.slice(0, 1000);
}
