/**
 * Test harness of the consumer group codecs. `groupCodecSuite` gives every codec, for each
 * version it serves: request and response round trips of the samples (group-samples.ts), the
 * bytes Kafka's own classes write for the same samples (group-apis.json, from GroupApis.java)
 * read back to the same values, every truncation throwing a ProtocolError, and seeded random
 * damage throwing nothing else. The helpers below serve the hand-written golden tests too.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ApiCodec } from '../../../ts/protocol/apis/api.js'
import { Reader } from '../../../ts/protocol/reader.js'
import { rng } from '../helpers.js'
import { type Kind, decode, encode, expectGolden as expectGoldenValue, expectRoundTrip, golden, throwsOnlyProtocolError, versionsOf } from './codec-harness.js'
import type { Samples } from './group-samples.js'

export { decode, encode, throwsOnlyProtocolError }

export type Side = Kind
type AnyCodec = ApiCodec<any, any>

const FIXTURE = join(__dirname, '..', 'fixtures', 'kafka-clients', 'group-apis.json')
const fixture: unknown = JSON.parse(readFileSync(FIXTURE, 'utf8'))
/** From group-apis.json: API name -> side -> version -> hex. */
export const KAFKA = fixture as Record<string, Record<Side, Record<string, string>>>
/** From group-apis.json: schema name -> version -> hex (version int16 first). */
export const KAFKA_CONSUMER_PROTOCOL = fixture as Record<'ConsumerProtocolSubscription' | 'ConsumerProtocolAssignment', Record<string, string>>

const FUZZ_ITERATIONS = Number(process.env.FERROLOG_FUZZ_ITERATIONS ?? 300)

/** Hex laid out one field per line: whitespace is ignored and `//` starts a comment. */
export const hex = golden

/** `value` encodes to exactly `bytes`, and `bytes` decode to exactly `value`. */
export function expectGolden(codec: AnyCodec, side: Side, version: number, bytes: Buffer, value: unknown): void {
  expectGoldenValue(codec, side, version, value, bytes)
}

function decoder(codec: AnyCodec, side: Side, version: number): (b: Buffer) => unknown {
  return (b) => (side === 'request' ? codec.decodeRequest(new Reader(b), version) : codec.decodeResponse(new Reader(b), version))
}

/** Every strict prefix of a valid encoding throws a ProtocolError. */
export function expectTruncationsThrow(codec: AnyCodec, side: Side, version: number, bytes: Buffer): void {
  const dec = decoder(codec, side, version)
  for (let n = 0; n < bytes.length; n++) {
    const what = `${codec.name} v${version} ${side} cut to ${n} of ${bytes.length} bytes`
    expect(
      throwsOnlyProtocolError(() => dec(bytes.subarray(0, n)), what),
      what,
    ).toBe(true)
  }
}

/**
 * Seeded damage to a valid encoding (bit flips, boundary bytes, cuts, insertions, int32 lengths
 * and varints that lie) and plain random bytes: decoding returns or throws a ProtocolError.
 */
export function fuzzDecode(codec: AnyCodec, side: Side, version: number, valid: Buffer, seed: number, iterations: number): void {
  const dec = decoder(codec, side, version)
  const next = rng(seed)
  const pick = (n: number) => Math.floor(next() * n)
  for (let i = 0; i < iterations; i++) {
    let buf = Buffer.from(valid)
    if (i % 8 === 7) {
      buf = Buffer.alloc(pick(48))
      for (let j = 0; j < buf.length; j++) buf[j] = pick(256)
    } else {
      for (let round = 1 + pick(3); round > 0 && buf.length > 0; round--) {
        const at = pick(buf.length)
        switch (pick(6)) {
          case 0:
            buf[at] ^= 1 << pick(8)
            break
          case 1:
            buf[at] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff][pick(6)]
            break
          case 2:
            buf = buf.subarray(0, at)
            break
          case 3: {
            const extra = Buffer.alloc(1 + pick(5))
            for (let j = 0; j < extra.length; j++) extra[j] = pick(256)
            buf = Buffer.concat([buf.subarray(0, at), extra, buf.subarray(at)])
            break
          }
          case 4:
            if (at + 4 <= buf.length) buf.writeInt32BE([0x7fffffff, 0x10000, -1, -2][pick(4)], at)
            break
          default:
            if (at + 5 <= buf.length) buf.set([0xff, 0xff, 0xff, 0xff, pick(2) ? 0x0f : 0x7f], at)
        }
      }
    }
    throwsOnlyProtocolError(() => dec(buf), `${codec.name} v${version} ${side} damage #${i} ${buf.toString('hex')}`)
  }
}

export function groupCodecSuite<Req, Res>(codec: ApiCodec<Req, Res>, samples: Samples<Req, Res>, seed: number): void {
  const sides: Array<[Side, (v: number) => unknown, (v: number) => unknown]> = [
    ['request', samples.request, samples.requestExpected],
    ['response', samples.response, samples.responseExpected],
  ]

  it('serves the versions Kafka 4.x defines (those it removed in 4.0 excepted)', () => {
    expect(Object.keys(KAFKA[codec.name].request).map(Number)).toEqual(versionsOf(codec))
  })

  for (const v of versionsOf(codec)) {
    describe(`v${v}${v >= codec.flexibleFrom ? ' (flexible)' : ''}`, () => {
      for (const [side, sample, expected] of sides) {
        it(`${side} round trip, the fields v${v} lacks at their defaults`, () => {
          expectRoundTrip(codec, side, v, sample(v), expected(v))
        })

        it(`${side} bytes as Kafka's own classes write them`, () => {
          const kafka = Buffer.from(KAFKA[codec.name][side][v], 'hex')
          expect(encode(codec, side, v, sample(v)).toString('hex')).toBe(kafka.toString('hex'))
          expect(decode(codec, side, v, kafka)).toStrictEqual(expected(v))
        })

        it(`${side}: truncated or damaged bytes throw ProtocolError only`, () => {
          const bytes = encode(codec, side, v, sample(v))
          expectTruncationsThrow(codec, side, v, bytes)
          fuzzDecode(codec, side, v, bytes, seed * 100 + v * 2 + (side === 'request' ? 0 : 1), FUZZ_ITERATIONS)
        })
      }
    })
  }
}
