/**
 * The generated codecs against Kafka's own serializer: for every message of the pinned jars
 * (every request and response of every ApiKey, the headers, the data messages and the
 * coordinators' records) and every version, random messages serialized by Kafka's generated Java
 * classes decode in ferrolog to the same values and encode to the same bytes, and ferrolog's bytes
 * parse in Java to the same values; values written at another version are refused by both or
 * written alike. See scripts/protocol/differential.mjs; scripts/protocol-differential.mjs runs
 * many more per version.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MessageCodec } from '../../../ts/protocol/message-codec.js'
import { Reader } from '../../../ts/protocol/reader.js'
import { Writer } from '../../../ts/protocol/writer.js'
// @ts-expect-error plain JavaScript shared with scripts/protocol-differential.mjs
import { checkMessage, codecExport, codecModule, startKafkaSerializer } from '../../../scripts/protocol/differential.mjs'
// @ts-expect-error plain JavaScript shared with the generator
import { loadSchemas } from '../../../scripts/protocol/kafka-schemas.mjs'

/** Random messages per (message, version): a few in CI, more in scripts/protocol-differential.mjs. */
const PER_VERSION = Number(process.env.FERROLOG_DIFFERENTIAL_COUNT ?? 5)

const io = {
  encode(codec: MessageCodec<unknown>, version: number, value: unknown): Buffer {
    const w = new Writer(64)
    codec.write(w, version, value)
    return Buffer.from(w.finish())
  },
  decode(codec: MessageCodec<unknown>, version: number, bytes: Buffer): unknown {
    const r = new Reader(bytes)
    const value = codec.read(r, version)
    if (r.remaining !== 0) throw new Error(`${r.remaining} bytes left unread`)
    return value
  },
}

interface Entry {
  model: { name: string; type: string; apiKey: number | null; valid: { lo: number; hi: number } }
  folder: string
}

describe('generated codecs against Kafka 4.4 serializer', () => {
  execFileSync('bash', [join(__dirname, '../../../tools/kafka/fetch-jars.sh')], { stdio: 'ignore' })
  const entries: Entry[] = loadSchemas().filter((e: Entry) => e.model.valid !== null)
  let kafka: { ask(text: string): Promise<unknown>; close(): Promise<void> }
  const totals = { messages: 0, pairs: 0, checked: 0 }

  beforeAll(() => {
    kafka = startKafkaSerializer()
  })
  afterAll(async () => {
    await kafka?.close()
    // The figures of the run, for the note (vitest prints console output of the file).
    console.log(`differential: ${totals.messages} messages, ${totals.pairs} (message, version) pairs, ${PER_VERSION} random values each, ${totals.checked} checks`)
  })

  it('covers every ApiKey of Kafka 4.4 with a request and a response', () => {
    const requests = entries.filter((e) => e.model.type === 'request').map((e) => e.model.apiKey)
    const responses = entries.filter((e) => e.model.type === 'response').map((e) => e.model.apiKey)
    expect(requests.sort()).toEqual(responses.sort())
    expect(requests.length).toBeGreaterThanOrEqual(87)
  })

  for (const kind of ['request', 'response', 'other'] as const) {
    it(
      `${kind === 'other' ? 'headers, data messages and coordinator records' : `every ${kind}`}: Kafka and ferrolog agree`,
      async () => {
        const mine = entries.filter((e) => (kind === 'other' ? e.model.type !== 'request' && e.model.type !== 'response' : e.model.type === kind))
        const failures: string[] = []
        await Promise.all(
          mine.map(async (entry) => {
            // Two literal patterns: vite resolves a variable import one folder deep only.
            const file = codecModule(entry).replace(/^coordinator\//, '')
            const mod = entry.folder === 'coordinator' ? await import(`../../../ts/protocol/messages/coordinator/${file}.ts`) : await import(`../../../ts/protocol/messages/${file}.ts`)
            const codec = mod[codecExport(entry)] as MessageCodec<unknown>
            const result = await checkMessage(entry, codec, io, kafka, { count: PER_VERSION, seed: 0x5eed })
            totals.messages++
            totals.pairs += entry.model.valid.hi - entry.model.valid.lo + 1
            totals.checked += result.checked
            failures.push(...result.failures)
          }),
        )
        expect(failures.slice(0, 20).join('\n')).toBe('')
      },
      120_000 + PER_VERSION * 2_000,
    )
  }
})
