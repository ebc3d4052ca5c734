import assert from 'node:assert/strict';
import { loadConfig, resolveConfig } from '../../src/config/env';
import { createKafka } from '../../src/kafka/client';
import { kafkajsEncoder, kafkajsOwnMembers, LEAN_MEMBERS, leanEncoderApplies, useEncoderMembers, useLeanEncoder, type EncoderMembers } from '../../src/kafka/lean-encoder';

type ProduceRequest = (input: object) => { encode(): Promise<{ buffer: Buffer }> };
type EncodeRecord = (record: object) => { buffer: Buffer };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const produceRequest = require('kafkajs/src/protocol/requests/produce/v3/request') as ProduceRequest;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as EncodeRecord;

/** The edges of every varint length, both signs for zig-zag, and a spread between them. */
function sampleValues(): number[] {
  const values = new Set<number>([0, 1, 2, 63, 64, 127, 128, 255, 256, 300, 0xffffffff, 0x7fffffff, -1, -2, -64, -65, -0x80000000]);
  for (let bits = 1; bits <= 32; bits++) {
    const edge = 2 ** bits;
    for (const v of [edge - 1, edge, edge + 1, -edge, -edge + 1, -edge - 1]) if (v >= -(2 ** 31) && v <= 0xffffffff) values.add(v);
  }
  let x = 12345;
  for (let i = 0; i < 5_000; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    values.add(x);
    values.add(x | 0);
  }
  return [...values];
}

const record = (i: number) => ({
  offsetDelta: i,
  timestampDelta: i * 3,
  key: String(i % 97),
  // Sizes across the first capacity (512 B) and the small-buffer pool's limit (4 kB).
  value: JSON.stringify({ event_id: `évt-${i}`, amount: String(i), note: 'x'.repeat((i * 37) % 5_000) }),
  headers: { 'event-id': `évt-${i}`, 'event-type': 'payment_confirmed', 'created-at': '2026-12-04T19:00:00.000Z', 'outbox-id': String(1_000_000 + i) },
});

describe('the lean kafkajs encoder (unit)', () => {
  const Encoder = kafkajsEncoder();
  const kafkajsOwn = kafkajsOwnMembers();

  const membersInPlace = (): EncoderMembers => ({ nextPowerOfTwo: Encoder.nextPowerOfTwo, ensureAvailable: Encoder.prototype.ensureAvailable, writeUVarInt: Encoder.prototype.writeUVarInt });

  /** Runs `run` with one set of members in place, then puts back whatever was there. */
  async function withMembers<T>(members: EncoderMembers, run: () => T | Promise<T>): Promise<T> {
    const before = membersInPlace();
    useEncoderMembers(members);
    try {
      return await run();
    } finally {
      useEncoderMembers(before);
    }
  }

  /** A copy of what `encode` wrote with these members, after filling Node's small-buffer pool with garbage (an unwritten byte handed out shows as a difference). */
  function encodeWith(members: EncoderMembers, encode: () => Buffer | Promise<Buffer>): Promise<Buffer> {
    return withMembers(members, async () => {
      Buffer.allocUnsafe(4000).fill(0xab);
      return Buffer.from(await encode());
    });
  }

  it('writes the same bytes as kafkajs for unsigned and zig-zag (signed) varints, one after another', async () => {
    const values = sampleValues();
    const unsigned = () => {
      const e = new Encoder();
      for (const v of values) if (v >= 0) e.writeUVarInt(v);
      return Buffer.from(e.buf.subarray(0, e.offset));
    };
    const signed = () => {
      const e = new Encoder() as unknown as { writeVarInt(v: number): void; buf: Buffer; offset: number };
      for (const v of values) if (v <= 0x7fffffff) e.writeVarInt(v);
      return Buffer.from(e.buf.subarray(0, e.offset));
    };
    const ours = await encodeWith(LEAN_MEMBERS, unsigned);
    assert.ok(ours.length > values.length, 'the sample is encoded at all');
    assert.deepEqual(ours, await encodeWith(kafkajsOwn, unsigned));
    assert.deepEqual(await encodeWith(LEAN_MEMBERS, signed), await encodeWith(kafkajsOwn, signed));
  });

  it('encodes records (key, value, four headers) of every size to the bytes kafkajs itself writes', async () => {
    for (let i = 0; i < 300; i++) {
      const r = record(i);
      assert.deepEqual(await encodeWith(LEAN_MEMBERS, () => encodeRecord(r).buffer), await encodeWith(kafkajsOwn, () => encodeRecord(r).buffer), `record ${i}`);
    }
  });

  it('encodes a whole produce request of a relay batch to the bytes kafkajs itself writes', async () => {
    // Timestamps fixed: the request embeds the batch's first and max timestamps.
    const messages = Array.from({ length: 2_000 }, (_, i) => ({ ...record(i), timestamp: 1_764_000_000_000 + i }));
    const request = { acks: -1, timeout: 30_000, topicData: [{ topic: 'payments.events', partitions: [0, 1, 2].map((partition) => ({ partition, firstSequence: 0, messages: messages.filter((_, i) => i % 3 === partition) })) }] };
    const ours = await encodeWith(LEAN_MEMBERS, async () => (await produceRequest(request).encode()).buffer);
    assert.ok(ours.length > 2_000 * 100, 'the request carries the batch');
    assert.deepEqual(ours, await encodeWith(kafkajsOwn, async () => (await produceRequest(request).encode()).buffer));
  });

  it('starts an encoder with no buffer of its own until its first write', async () => {
    assert.equal(await withMembers(LEAN_MEMBERS, () => new Encoder().buf.length), 0);
    assert.equal(await withMembers(kafkajsOwn, () => new Encoder().buf.length), 512);
  });

  it('applies to the kafkajs installed here (2.2)', () => {
    assert.equal(leanEncoderApplies(), true);
    assert.equal(useLeanEncoder(), true);
    assert.deepEqual(membersInPlace(), LEAN_MEMBERS);
  });

  it('is put in place only when asked: never by a library caller\'s client by default (it patches kafkajs for the whole process)', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, KAFKA_BROKERS: '127.0.0.1:1', KAFKAJS_LEAN_ENCODER: undefined };
    await withMembers(kafkajsOwn, () => {
      createKafka(resolveConfig({ kafka: { brokers: ['127.0.0.1:1'] } }), 'lean-encoder-test');
      createKafka(loadConfig(env), 'lean-encoder-test');
      assert.deepEqual(membersInPlace(), kafkajsOwn, 'by default kafkajs keeps its own encoder');
      createKafka(loadConfig({ ...env, KAFKAJS_LEAN_ENCODER: 'true' }), 'lean-encoder-test');
      assert.deepEqual(membersInPlace(), LEAN_MEMBERS, 'asked for (the bundled workers ask), the client encodes with the lean members');
    });
  });
});
