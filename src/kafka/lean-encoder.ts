import kafkajsPackage from 'kafkajs/package.json';

/**
 * kafkajs 2.2 encodes a produce request wastefully, and on the relay that waste, not the broker,
 * is what its one busy thread spends most of its time on (docs/relay.md, "kafkajs's encoder"):
 *
 * - every record and every header gets a new Encoder, whose constructor zero-fills a fresh
 *   512-byte buffer (`Buffer.alloc`): five per message with our four headers, ≈ 2.5 kB of
 *   garbage for a 150-byte payload, outside the pool Node keeps for small buffers;
 * - every varint goes through a temporary JS array and `Buffer.from`: about 13 per message.
 *
 * The lean encoder changes three members of kafkajs's internal Encoder class so that the same bytes
 * come out with far less garbage: the constructor's buffer starts empty, the first write takes one
 * from Node's pool (`Buffer.allocUnsafe`: not zero-filled, which is safe because an Encoder only
 * ever exposes the bytes it has written, `buf.slice(0, offset)`), and varints are written in place.
 * test/unit/lean-encoder.unit.test.ts checks, byte for byte, that records and whole produce
 * requests come out as kafkajs's own encoder writes them.
 *
 * Guarded, because these are kafkajs internals: only on the 2.2 line (its last release, 2.2.4, is
 * the one this was written against) and only when the constructor still reads as expected; any
 * other kafkajs keeps its own encoder.
 *
 * The Encoder class is shared by every kafkajs client of the process, so the library never
 * installs it unasked: kafka.leanEncoder is off by default, and the bundled worker processes,
 * which run nothing else, turn it on (KAFKAJS_LEAN_ENCODER=false keeps them on kafkajs's own).
 */

interface KafkajsEncoder {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
  writeUVarInt(value: number): KafkajsEncoder;
}

export interface KafkajsEncoderClass {
  new (initialSize?: number): KafkajsEncoder;
  prototype: KafkajsEncoder;
  nextPowerOfTwo(value: number): number;
}

/** The members the lean encoder replaces, as one set (kafkajs's own, or ours). */
export interface EncoderMembers {
  /** Static; kafkajs's constructor sizes its first buffer with it (and nothing else calls it once ensureAvailable is ours). */
  nextPowerOfTwo(value: number): number;
  ensureAvailable(this: KafkajsEncoder, length: number): void;
  writeUVarInt(this: KafkajsEncoder, value: number): KafkajsEncoder;
}

// The constructor reads `Buffer.alloc(Encoder.nextPowerOfTwo(initialSize))`: with this its
// buffer starts empty, which costs no backing store.
const EMPTY_UNTIL_FIRST_WRITE = 0;
// kafkajs's own first capacity: one record with its payload fits without growing.
const FIRST_CAPACITY = 512;
// LEB128 for unsigned 32-bit values: 7 bits per byte, a set high bit means another byte follows.
const HIGHER_THAN_SEVEN_BITS = 0xffffff80;
const LOW_SEVEN_BITS = 0x7f;
const CONTINUATION_BIT = 0x80;
const MAX_UVARINT32_BYTES = 5;

const powerOfTwoAtLeast = (n: number) => 2 ** Math.ceil(Math.log2(n));

export const LEAN_MEMBERS: EncoderMembers = {
  nextPowerOfTwo: () => EMPTY_UNTIL_FIRST_WRITE,

  ensureAvailable(length) {
    const needed = this.offset + length;
    if (needed <= this.buf.length) return;
    // Node serves sizes below 4 kB from a shared slab: no allocation of its own, no zero fill.
    const grown = Buffer.allocUnsafe(Math.max(FIRST_CAPACITY, powerOfTwoAtLeast(needed)));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  },

  writeUVarInt(value) {
    this.ensureAvailable(MAX_UVARINT32_BYTES);
    const buf = this.buf;
    let offset = this.offset;
    while ((value & HIGHER_THAN_SEVEN_BITS) !== 0) {
      buf[offset++] = (value & LOW_SEVEN_BITS) | CONTINUATION_BIT;
      value >>>= 7;
    }
    buf[offset++] = value & LOW_SEVEN_BITS;
    this.offset = offset;
    return this;
  },
};

/** The kafkajs versions this was written against: the 2.2 line. */
export const SUPPORTED_KAFKAJS = /^2\.2\./;
const CONSTRUCTOR_AS_EXPECTED = 'Buffer.alloc(Encoder.nextPowerOfTwo(initialSize))';

let encoderClass: KafkajsEncoderClass | undefined;
let kafkajsMembers: EncoderMembers | undefined;

/** kafkajs's Encoder class (CommonJS, untyped: not part of its public API). */
export function kafkajsEncoder(): KafkajsEncoderClass {
  if (!encoderClass) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    encoderClass = require('kafkajs/src/protocol/encoder') as KafkajsEncoderClass;
    // Taken before anything here replaces them: what `useEncoderMembers(kafkajsOwnMembers())` restores.
    kafkajsMembers = { nextPowerOfTwo: encoderClass.nextPowerOfTwo, ensureAvailable: encoderClass.prototype.ensureAvailable, writeUVarInt: encoderClass.prototype.writeUVarInt };
  }
  return encoderClass;
}

/** kafkajs's own members, as it shipped them. */
export function kafkajsOwnMembers(): EncoderMembers {
  kafkajsEncoder();
  return kafkajsMembers!;
}

/** Puts one set of members in place, for every Kafka client of this process (the test and the benchmark switch between the two). */
export function useEncoderMembers(members: EncoderMembers): void {
  const Encoder = kafkajsEncoder();
  Encoder.nextPowerOfTwo = members.nextPowerOfTwo;
  Encoder.prototype.ensureAvailable = members.ensureAvailable;
  Encoder.prototype.writeUVarInt = members.writeUVarInt;
}

/** Whether this kafkajs is one the lean encoder was written against. */
export function leanEncoderApplies(): boolean {
  const Encoder = kafkajsEncoder();
  return SUPPORTED_KAFKAJS.test(kafkajsPackage.version) && String(Encoder).includes(CONSTRUCTOR_AS_EXPECTED) && typeof Encoder.prototype.writeUVarInt === 'function';
}

/** Installs the lean encoder (again is harmless: the same members); returns whether it is in place. */
export function useLeanEncoder(): boolean {
  if (!leanEncoderApplies()) return false;
  useEncoderMembers(LEAN_MEMBERS);
  return true;
}
