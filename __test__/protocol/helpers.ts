/** Shared helpers of the protocol tests. */
import { expect } from 'vitest'
import { RecordError, type RecordErrorCode } from '../../ts/protocol/record-error.js'

/** Runs `fn`, expecting a RecordError with `code` (and nothing else). */
export function expectRecordError(fn: () => unknown, code: RecordErrorCode, message?: RegExp): RecordError {
  let thrown: unknown
  try {
    fn()
  } catch (err) {
    thrown = err
  }
  expect(thrown, 'expected a RecordError').toBeInstanceOf(RecordError)
  const err = thrown as RecordError
  expect(err.code, err.message).toBe(code)
  if (message) expect(err.message).toMatch(message)
  return err
}

/** A small deterministic PRNG (mulberry32) for reproducible random tests. */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ['log', 'segment', 'offset', 'index', 'batch', 'record', 'header', 'epoch', 'leader', 'fetch', 'zstd', 'lz4']

/**
 * The input compressed into __test__/protocol/fixtures/codecs/ by the reference tools
 * (`lz4`, `zstd` command-line tools, snappy-java): `lines` lines of words, about 30 bytes each.
 */
export function codecInput(lines = 3000): Buffer {
  const parts: string[] = []
  for (let i = 0; i < lines; i++) {
    parts.push(`${i}: ${WORDS[i % 12]} ${WORDS[(i * 7) % 12]} ${WORDS[(i * 5 + 3) % 12]}\n`)
  }
  return Buffer.from(parts.join(''), 'utf8')
}
