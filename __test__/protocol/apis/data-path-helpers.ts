/**
 * Helpers of the Produce, Fetch and ListOffsets codec tests, beside codec-harness.ts: golden hex
 * laid out one field per line, recognisable uuids, and lengths that lie at every position.
 */
import type { ApiCodec } from '../../../ts/protocol/apis/api.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { Reader } from '../../../ts/protocol/reader.js'
import type { Kind } from './codec-harness.js'

export { golden } from './codec-harness.js'

/** A recognisable uuid: byte i is (seed * 16 + i) & 0xff. */
export function uuid(seed: number): Buffer {
  const b = Buffer.alloc(16)
  for (let i = 0; i < 16; i++) b[i] = (seed * 16 + i) & 0xff
  return b
}

/** What lying lengths look like: int32 counts and lengths, and unsigned varints. */
const LIES: Buffer[] = [
  Buffer.from('7fffffff', 'hex'), // int32 count or length far beyond the input
  Buffer.from('ffffffff', 'hex'), // -1: null where null may not be
  Buffer.from('fffffffe', 'hex'), // -2: negative
  Buffer.from('80000000', 'hex'), // most negative
  Buffer.from('0000ffff', 'hex'), // 65535
  Buffer.from('ffffffff0f', 'hex'), // varint 2^32 - 1
  Buffer.from('ffffffffff01', 'hex'), // varint of 6 bytes
  Buffer.from('8080808001', 'hex'), // varint 2^28, far beyond the input
]

/**
 * Overwrites every position of a valid encoding with every lie: decoding either returns or throws
 * a ProtocolError, never anything else (no RangeError, no huge allocation).
 */
export function expectLyingLengthsThrowOnlyProtocolError(codec: ApiCodec<unknown, unknown>, kind: Kind, version: number, valid: Buffer): void {
  for (const lie of LIES) {
    for (let at = 0; at + lie.length <= valid.length; at++) {
      const buf = Buffer.from(valid)
      lie.copy(buf, at)
      try {
        const r = new Reader(buf)
        if (kind === 'request') codec.decodeRequest(r, version)
        else codec.decodeResponse(r, version)
      } catch (err) {
        if (!(err instanceof ProtocolError)) {
          throw new Error(`${codec.name} v${version} ${kind}, ${lie.toString('hex')} at ${at}: ${String(err)}`, { cause: err })
        }
      }
    }
  }
}
