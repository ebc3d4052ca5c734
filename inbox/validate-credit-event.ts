import { PAYMENT_CONFIRMED } from '../config/constants';
import { HEADERS } from '../kafka/message-format';

// Every way a Kafka message can fail to be a creditable payment_confirmed event, each with a
// reason an operator can act on. Hostile content is only ever data: it is parked as text and
// reaches SQL as a bound parameter, never as SQL.

/** A message as the consumer receives it (kafkajs' KafkaMessage, narrowed to what we read). */
export interface RawCreditMessage {
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

/** A validated credit. account_id and amount are decimal strings so bigint values survive JSON. */
export interface CreditEvent {
  eventId: string;
  accountId: string;
  amount: string;
}

export type ValidationResult = { ok: true; event: CreditEvent } | { ok: false; reason: string; eventId?: string };

export interface ValidationLimits {
  /** Largest credit accepted, in minor units; anything above is "absurd" and parked. */
  maxCreditAmount: number;
}

export const MAX_EVENT_ID_LENGTH = 200;
const BIGINT_MAX = 9223372036854775807n;
// Control characters (NUL above all: PostgreSQL text cannot hold it) have no place in an id.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export function validateCreditEvent(message: RawCreditMessage, limits: ValidationLimits): ValidationResult {
  const text = message.value === null ? '' : message.value.toString();
  if (text.trim() === '') return { ok: false, reason: 'empty message: no payload' };

  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `malformed JSON: ${(err as Error).message.slice(0, 200)}` };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return { ok: false, reason: 'payload is not a JSON object' };
  }
  const p = payload as Record<string, unknown>;

  const eventId = p.event_id;
  if (eventId === undefined || eventId === null || eventId === '') return { ok: false, reason: 'missing event id' };
  if (typeof eventId !== 'string') return { ok: false, reason: 'event id must be a string' };
  if (eventId.length > MAX_EVENT_ID_LENGTH) return { ok: false, reason: `event id longer than ${MAX_EVENT_ID_LENGTH} characters` };
  if (CONTROL_CHARACTERS.test(eventId)) return { ok: false, reason: 'event id contains control characters' };
  const headerId = headerText(message, HEADERS.eventId);
  if (headerId !== undefined && headerId !== eventId) {
    return { ok: false, eventId, reason: 'event id header does not match the payload event id' };
  }

  const type = p.type ?? headerText(message, HEADERS.eventType);
  if (type === undefined || type === null || type === '') return { ok: false, eventId, reason: 'missing event type' };
  if (type !== PAYMENT_CONFIRMED) return { ok: false, eventId, reason: `unknown event type ${quote(type)}` };

  const accountId = p.account_id;
  if (accountId === undefined || accountId === null || accountId === '') return { ok: false, eventId, reason: 'missing account id' };
  const account = positiveBigint(accountId);
  if (account === undefined || account > BIGINT_MAX) {
    return { ok: false, eventId, reason: `account id must be a positive integer (got ${quote(accountId)})` };
  }

  const amount = p.amount;
  if (amount === undefined || amount === null) return { ok: false, eventId, reason: 'missing amount' };
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) {
    return { ok: false, eventId, reason: `amount must be a positive safe integer in minor units (got ${quote(amount)})` };
  }
  if (amount > limits.maxCreditAmount) {
    return { ok: false, eventId, reason: `amount ${amount} exceeds the maximum credit of ${limits.maxCreditAmount}` };
  }

  return { ok: true, event: { eventId, accountId: account.toString(), amount: String(amount) } };
}

/** Accepts a JSON integer or a string of digits (ids beyond 2^53 travel as strings). */
function positiveBigint(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? BigInt(value) : undefined;
  if (typeof value === 'string' && /^[1-9][0-9]{0,18}$/.test(value)) return BigInt(value);
  return undefined;
}

function headerText(message: RawCreditMessage, name: string): string | undefined {
  const raw = message.headers?.[name];
  const first = Array.isArray(raw) ? raw[0] : raw;
  return first === undefined ? undefined : first.toString();
}

/** A short, JSON-quoted rendering of an offending value, safe to put in a reason. */
function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
