/**
 * Shared checks of the API codec tests: round trips, golden bytes written as commented hex, and
 * seeded corruption of valid encodings (which must throw ProtocolError and nothing else).
 */
import { describe, expect, it } from 'vitest'
import type { ApiCodec } from '../../../ts/protocol/apis/api.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { Reader } from '../../../ts/protocol/reader.js'
import { Writer } from '../../../ts/protocol/writer.js'
import { rng } from '../helpers.js'

export type Kind = 'request' | 'response'

type AnyCodec = ApiCodec<any, any>

/** The versions a codec serves, lowest first. */
export function versionsOf(codec: AnyCodec): number[] {
  const out: number[] = []
  for (let v = codec.minVersion; v <= codec.maxVersion; v++) out.push(v)
  return out
}

export function encode(codec: AnyCodec, kind: Kind, version: number, value: unknown): Buffer {
  const w = new Writer(8)
  if (kind === 'request') codec.encodeRequest(w, version, value)
  else codec.encodeResponse(w, version, value)
  return Buffer.from(w.finish())
}

/** Decodes `bytes` as a whole: a decoder that leaves bytes unread fails the test. */
export function decode(codec: AnyCodec, kind: Kind, version: number, bytes: Buffer): unknown {
  const r = new Reader(bytes)
  const value = kind === 'request' ? codec.decodeRequest(r, version) : codec.decodeResponse(r, version)
  expect(r.remaining, `${codec.name} v${version} ${kind}: bytes left unread`).toBe(0)
  return value
}

/**
 * encode -> decode equals `expected` (the input with the fields this version lacks at their
 * defaults), and encoding what was decoded gives the same bytes. Returns the bytes.
 */
export function expectRoundTrip(codec: AnyCodec, kind: Kind, version: number, input: unknown, expected: unknown): Buffer {
  const bytes = encode(codec, kind, version, input)
  const decoded = decode(codec, kind, version, bytes)
  expect(decoded).toStrictEqual(expected)
  expect(encode(codec, kind, version, decoded).equals(bytes), 're-encoding changed the bytes').toBe(true)
  return bytes
}

/**
 * Bytes from hex lines, each optionally followed by a comment:
 *   hex('0003 // apiKey', '00000001 // count')
 */
export function hex(...lines: string[]): Buffer {
  const digits = lines.map((line) => line.replace(/\/\/.*$/, '').replace(/\s+/g, '')).join('')
  if (!/^([0-9a-f]{2})*$/i.test(digits)) throw new Error(`bad hex: ${digits}`)
  return Buffer.from(digits, 'hex')
}

/** Golden bytes from a multi-line template: hex digits, whitespace, `//` comments to line end. */
export function golden(text: string): Buffer {
  return hex(...text.split('\n'))
}

/** Hex of a UTF-8 string, for golden bytes. */
export function utf8(s: string): string {
  return Buffer.from(s, 'utf8').toString('hex')
}

/** `expected` bytes are what encoding `value` gives and decoding them gives `value` back. */
export function expectGolden(codec: AnyCodec, kind: Kind, version: number, value: unknown, expected: Buffer): void {
  expect(encode(codec, kind, version, value).toString('hex')).toBe(expected.toString('hex'))
  expect(decode(codec, kind, version, expected)).toStrictEqual(value)
}

/**
 * A flexible body with unknown tagged fields appended to its top-level structure (whose own
 * tagged fields, when none are written, are the final zero byte) decodes as without them.
 */
export function expectUnknownTopLevelTagsSkipped(codec: AnyCodec, kind: Kind, version: number, value: unknown): void {
  const bytes = encode(codec, kind, version, value)
  expect(bytes[bytes.length - 1]).toBe(0)
  const tagged = Buffer.concat([bytes.subarray(0, -1), hex('02 5a 03 010203 // tag 90: 3 bytes', '5b 00 // tag 91: empty')])
  expect(decode(codec, kind, version, tagged)).toStrictEqual(decode(codec, kind, version, bytes))
}

/** Runs `fn`; it may return or throw a ProtocolError, and nothing else. Whether it threw. */
export function throwsOnlyProtocolError(fn: () => unknown, what: string): boolean {
  try {
    fn()
    return false
  } catch (err) {
    if (!(err instanceof ProtocolError)) {
      throw new Error(`${what}: threw ${(err as Error)?.name}: ${(err as Error)?.message}`, { cause: err })
    }
    return true
  }
}

function decodeOnce(codec: AnyCodec, kind: Kind, version: number, bytes: Buffer): void {
  const r = new Reader(bytes)
  if (kind === 'request') codec.decodeRequest(r, version)
  else codec.decodeResponse(r, version)
}

const FUZZ_ITERATIONS = Number(process.env.FERROLOG_FUZZ_ITERATIONS ?? 300)

/**
 * Every strict prefix of a valid encoding throws ProtocolError; seeded mutations of it and random
 * bytes either decode or throw ProtocolError, never anything else.
 */
export function expectCorruptionThrowsProtocolError(codec: AnyCodec, kind: Kind, version: number, valid: Buffer, seed: number): void {
  const what = `${codec.name} v${version} ${kind}`
  for (let len = 0; len < valid.length; len++) {
    const threw = throwsOnlyProtocolError(() => decodeOnce(codec, kind, version, valid.subarray(0, len)), `${what} cut at ${len}`)
    expect(threw, `${what} cut at ${len} decoded`).toBe(true)
  }
  const next = rng(seed)
  const pick = (n: number) => Math.floor(next() * n)
  for (let i = 0; i < FUZZ_ITERATIONS; i++) {
    let buf: Buffer
    if (i % 5 === 4) {
      buf = Buffer.alloc(pick(64))
      for (let j = 0; j < buf.length; j++) buf[j] = pick(256)
    } else {
      buf = Buffer.from(valid)
      for (let rounds = 1 + pick(3); rounds > 0 && buf.length > 0; rounds--) {
        const at = pick(buf.length)
        switch (pick(4)) {
          case 0:
            buf[at] ^= 1 << pick(8)
            break
          case 1:
            buf[at] = [0x00, 0x01, 0x7f, 0x80, 0xff][pick(5)]
            break
          case 2:
            buf = Buffer.concat([buf.subarray(0, at), buf.subarray(at + 1 + pick(4))])
            break
          default:
            buf = Buffer.concat([buf.subarray(0, at), Buffer.from([pick(256), pick(256)]), buf.subarray(at)])
        }
      }
    }
    throwsOnlyProtocolError(() => decodeOnce(codec, kind, version, buf), `${what} mutation ${i}`)
  }
}

/** What a test gives for one version: the value to encode and what decoding must give back. */
export interface Sample<T> {
  input: T
  expected: T
}

/**
 * The checks every codec gets, for every version it serves: request and response round trips,
 * unknown top-level tagged fields skipped (flexible versions), corrupted input.
 */
export function describeCodecVersions<Req, Res>(
  codec: ApiCodec<Req, Res>,
  samples: {
    request(version: number): Sample<Req>
    response(version: number): Sample<Res>
    /** A response without top-level tagged fields, when `response` has some. */
    untaggedResponse?(version: number): Res
  },
): void {
  describe(`${codec.name} v${codec.minVersion}-v${codec.maxVersion}`, () => {
    for (const version of versionsOf(codec)) {
      for (const kind of ['request', 'response'] as const) {
        const sample = () => (kind === 'request' ? samples.request(version) : samples.response(version))
        it(`v${version} ${kind} round trips`, () => {
          const { input, expected } = sample()
          expectRoundTrip(codec, kind, version, input, expected)
        })
        if (version >= codec.flexibleFrom) {
          it(`v${version} ${kind} skips unknown tagged fields`, () => {
            const untagged = kind === 'response' ? samples.untaggedResponse?.(version) : undefined
            expectUnknownTopLevelTagsSkipped(codec, kind, version, untagged ?? sample().input)
          })
        }
        it(`v${version} ${kind}: truncated or corrupted input throws ProtocolError only`, () => {
          const bytes = encode(codec, kind, version, sample().input)
          expectCorruptionThrowsProtocolError(codec, kind, version, bytes, codec.apiKey * 1000 + version * 2 + (kind === 'request' ? 0 : 1))
        })
      }
    }
  })
}
