import { EVENT_VERSION_HEADER, parseVersionHeader } from '../../events/version-header';
import { RegistryRefusedError } from './client';
import type { RegistryEncoder, RegistryWriter } from './encoder';

/** What the relay hands over per row: its event type and JSON text, the message built from it (its headers name the version), its size. */
export interface EncodableItem {
  row: { id: number; eventType: string; value: string };
  message: { value: string | Buffer; headers?: Record<string, string> };
  bytes: number;
}

export interface RegistryEncoding<T> {
  /** The items to send, values of registry topics framed in place. */
  sendable: T[];
  /** Rows that can never be written as they are (payload does not fit, registry refused the schema), with why. */
  refused: { id: number; reason: string }[];
}

/**
 * The relay's call-out (activities/relay/publish-batch.ts): encodes the values of topics configured
 * for the Schema Registry, after the plain checks and before the send. The registry is asked at most
 * once per topic, type and version per process; an unreachable registry throws RegistryUnavailableError,
 * which fails the batch like an unreachable broker (retried, never parked).
 */
export async function encodeWithRegistry<T extends EncodableItem>(encoder: RegistryEncoder | undefined, items: T[], topicOf: (item: T) => string, maxMessageBytes: number): Promise<RegistryEncoding<T>> {
  if (encoder === undefined || Object.keys(encoder.settings.topics).length === 0) return { sendable: items, refused: [] };
  const writers = await writersOf(encoder, items, topicOf);
  const sendable: T[] = [];
  const refused: { id: number; reason: string }[] = [];
  for (const item of items) {
    const writer = writers.get(writerKey(topicOf(item), item.row.eventType, versionOf(item)));
    if (writer === undefined) {
      sendable.push(item);
      continue;
    }
    if (typeof writer === 'string') {
      refused.push({ id: item.row.id, reason: writer });
      continue;
    }
    // The plain checks passed, so the text is a JSON object.
    const encoded = encoder.encode(writer, JSON.parse(item.row.value) as Record<string, unknown>, item.row.value);
    if (!encoded.ok) {
      refused.push({ id: item.row.id, reason: encoded.reason });
      continue;
    }
    const bytes = item.bytes - Buffer.byteLength(item.message.value) + encoded.value.length;
    if (bytes > maxMessageBytes) {
      refused.push({ id: item.row.id, reason: `registry-encoded message of ${bytes} bytes exceeds the ${maxMessageBytes}-byte Kafka limit (KAFKA_MAX_MESSAGE_BYTES)` });
      continue;
    }
    item.message.value = encoded.value;
    item.bytes = bytes;
    sendable.push(item);
  }
  return { sendable, refused };
}

/** Per topic, type and version of a registry topic: its writer, or the registry's refusal as a reason. */
async function writersOf<T extends EncodableItem>(encoder: RegistryEncoder, items: T[], topicOf: (item: T) => string): Promise<Map<string, RegistryWriter | string>> {
  const pending = new Map<string, Promise<RegistryWriter>>();
  for (const item of items) {
    const topic = topicOf(item);
    const format = encoder.formatOf(topic);
    const version = versionOf(item);
    const key = writerKey(topic, item.row.eventType, version);
    if (format !== undefined && !pending.has(key)) pending.set(key, encoder.writerFor(topic, item.row.eventType, format, version));
  }
  const writers = new Map<string, RegistryWriter | string>();
  for (const [key, writer] of pending) {
    try {
      writers.set(key, await writer);
    } catch (err) {
      if (!(err instanceof RegistryRefusedError)) throw err;
      writers.set(key, err.message);
    }
  }
  return writers;
}

const writerKey = (topic: string, eventType: string, version: number | undefined) => `${topic}\u0000${eventType}\u0000${version ?? ''}`;

/** The version the row was written as (its event-version header); undefined without one, or with one that is no version (parked earlier when the type is known). */
function versionOf(item: EncodableItem): number | undefined {
  const parsed = parseVersionHeader(item.message.headers?.[EVENT_VERSION_HEADER]);
  return parsed.ok ? parsed.version : undefined;
}
