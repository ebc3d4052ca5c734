import { envelopeOf, type EnvelopeResult, type RawMessage } from '../../inbox/validate-envelope';
import { RegistryRefusedError } from './client';
import type { RegistryDecoder } from './decoder';
import { isFramed, unframeValue } from './wire-format';

/**
 * The consumer's call-out (src/inbox/consume-batch.ts), before the envelope check: the envelope
 * of each framed value of the chunk, decoded through the registry when the consumer has one, or a
 * parked reason that says what the value is when it has none. Undefined for a chunk without
 * framed values (the plain JSON path: one byte looked at per message), and undefined at each
 * plain message's place. An unreachable registry throws: the chunk is retried, never parked.
 */
export async function decodeFramedValues(decoder: RegistryDecoder | undefined, topic: string, messages: readonly RawMessage[]): Promise<(EnvelopeResult | undefined)[] | undefined> {
  if (!messages.some((m) => isFramed(m.value))) return undefined;
  const out: (EnvelopeResult | undefined)[] = [];
  for (const message of messages) {
    if (!isFramed(message.value)) {
      out.push(undefined);
      continue;
    }
    const { schemaId, body } = unframeValue(message.value as Buffer);
    if (decoder === undefined) {
      out.push({ ok: false, reason: `value is Confluent Schema Registry wire format (schema id ${schemaId}), not JSON; configure SCHEMA_REGISTRY_URL (kafka.schemaRegistry.url) for topic ${topic}` });
      continue;
    }
    let codec;
    try {
      codec = await decoder.codecFor(schemaId);
    } catch (err) {
      if (!(err instanceof RegistryRefusedError)) throw err;
      out.push({ ok: false, reason: `schema id ${schemaId} cannot be read from the registry: ${err.message}` });
      continue;
    }
    let payload: unknown;
    try {
      payload = codec.read(body);
    } catch (err) {
      out.push({ ok: false, reason: `value does not decode with schema id ${schemaId}: ${(err as Error).message.slice(0, 200)}` });
      continue;
    }
    out.push(envelopeOf(payload, message));
  }
  return out;
}

/** A framed value as parked text: its schema id and bytes (binary Avro is no text to show). */
export function describeFramedValue(value: Buffer): string {
  const { schemaId, body } = unframeValue(value);
  return `[Confluent wire format, schema id ${schemaId}, ${body.length} bytes, base64] ${body.toString('base64')}`;
}
