// The Confluent Schema Registry wire format, which every registry-aware Kafka client reads:
//   byte 0     magic byte, always 0
//   bytes 1-4  the schema's registry id, a 32-bit big-endian integer
//   bytes 5-   the body: Avro binary for an Avro schema, the JSON text for a JSON Schema
// JSON text never starts with a NUL byte, so a value whose first byte is 0 is never plain JSON:
// a consumer can tell the two apart from the first byte alone.

export const MAGIC_BYTE = 0;
export const HEADER_BYTES = 5;

/** The framed value: magic byte, schema id, body. */
export function frameValue(schemaId: number, body: Buffer): Buffer {
  if (!Number.isInteger(schemaId) || schemaId < 0 || schemaId > 0xffffffff) throw new RangeError(`schema id ${schemaId} does not fit the wire format's 4 bytes`);
  const framed = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  framed[0] = MAGIC_BYTE;
  framed.writeUInt32BE(schemaId, 1);
  body.copy(framed, HEADER_BYTES);
  return framed;
}

/** True when the value is framed in the wire format (starts with the magic byte and holds an id). */
export function isFramed(value: Buffer | string | null | undefined): boolean {
  return Buffer.isBuffer(value) && value.length >= HEADER_BYTES && value[0] === MAGIC_BYTE;
}

/** The schema id and body of a framed value; call only on what isFramed accepted. */
export function unframeValue(value: Buffer): { schemaId: number; body: Buffer } {
  return { schemaId: value.readUInt32BE(1), body: value.subarray(HEADER_BYTES) };
}
