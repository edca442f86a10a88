/**
 * Writes __test__/fixtures/protocol/data-path/*.bin: Produce, Fetch and ListOffsets frames
 * exchanged by Apache Kafka's own console producer and consumer (kafka-tools 4.4) and a real
 * Kafka 4.4 broker, recorded by a proxy between them. Not part of `npm test`: run by hand with
 * `npm run capture:frames` (needs java and the jars of tools/kafka/fetch-jars.sh);
 * data-path-frames.test.ts reads what it wrote. See the README there.
 *
 * The broker advertises the proxy's port, so every connection of the clients goes through it. The
 * proxy lowers the maxVersion of Produce, Fetch and ListOffsets in the broker's ApiVersions
 * responses, which makes the clients use the versions ferrolog serves (first pass: our maxima;
 * second pass: the last classic, non-flexible versions).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ApiKey } from '../../../ts/protocol/apis/api.js'
import { type FetchResponse, fetchCodec } from '../../../ts/protocol/apis/fetch.js'
import { readResponseHeader } from '../../../ts/protocol/header.js'
import { Reader } from '../../../ts/protocol/reader.js'

const ROOT = join(__dirname, '../../..')
const OUT = join(ROOT, '__test__/fixtures/protocol/data-path')

const NAMES: Record<number, string> = { [ApiKey.Produce]: 'produce', [ApiKey.Fetch]: 'fetch', [ApiKey.ListOffsets]: 'list-offsets' }

interface Exchange {
  apiKey: number
  version: number
  clientId: string | null
  /** The frames without their int32 size prefix: header and body. */
  request: Buffer
  response?: Buffer
}

/** Splits a byte stream into size-prefixed frames. */
function framer(onFrame: (frame: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0)
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = pending.readInt32BE(0)
      onFrame(pending.subarray(4, 4 + size))
      pending = pending.subarray(4 + size)
    }
  }
}

function prefixed(frame: Buffer): Buffer {
  const size = Buffer.alloc(4)
  size.writeInt32BE(frame.length)
  return Buffer.concat([size, frame])
}

/** Lowers maxVersion in an ApiVersions response frame (header v0), in place. */
function capApiVersions(frame: Buffer, requestVersion: number, caps: Map<number, number>): void {
  const r = new Reader(frame, 4 + 2) // correlationId, errorCode
  const flexible = requestVersion >= 3
  const count = flexible ? r.unsignedVarint() - 1 : r.int32()
  for (let i = 0; i < count; i++) {
    const apiKey = r.int16()
    r.int16() // minVersion
    const at = r.pos
    const max = r.int16()
    const cap = caps.get(apiKey)
    if (cap !== undefined && max > cap) frame.writeInt16BE(cap, at)
    if (flexible) r.skipTaggedFields()
  }
}

/** A proxy from a free port to 127.0.0.1:target that records every exchange. */
async function startProxy(target: () => number, caps: () => Map<number, number>, exchanges: Exchange[]) {
  const server = net.createServer((client) => {
    const broker = net.connect(target(), '127.0.0.1')
    const inFlight: Exchange[] = []
    client.on(
      'data',
      framer((frame) => {
        const r = new Reader(frame)
        const apiKey = r.int16()
        const version = r.int16()
        r.int32()
        const exchange: Exchange = { apiKey, version, clientId: r.nullableString(), request: Buffer.from(frame) }
        exchanges.push(exchange)
        inFlight.push(exchange)
        broker.write(prefixed(frame))
      }),
    )
    broker.on(
      'data',
      framer((frame) => {
        const exchange = inFlight.shift()
        if (exchange?.apiKey === ApiKey.ApiVersions) capApiVersions(frame, exchange.version, caps())
        if (exchange) exchange.response = Buffer.from(frame)
        client.write(prefixed(frame))
      }),
    )
    client.on('close', () => broker.destroy())
    broker.on('close', () => client.destroy())
    client.on('error', () => broker.destroy())
    broker.on('error', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() }
}

async function freePort(): Promise<number> {
  const s = net.createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const port = (s.address() as net.AddressInfo).port
  await new Promise((resolve) => s.close(resolve))
  return port
}

describe('capture Kafka frames', () => {
  it('records Produce, Fetch and ListOffsets between Kafka 4.4 tools and a Kafka 4.4 broker', { timeout: 300_000 }, async () => {
    const jars = execFileSync('bash', [join(ROOT, 'tools/kafka/fetch-jars.sh')], { encoding: 'utf8' }).trim()
    const data = mkdtempSync(join(tmpdir(), 'ferrolog-capture-'))
    const brokerPort = await freePort()
    let caps = new Map<number, number>()
    const exchanges: Exchange[] = []
    const proxy = await startProxy(
      () => brokerPort,
      () => caps,
      exchanges,
    )
    const bootstrap = `127.0.0.1:${proxy.port}`
    // Asynchronous: the proxy runs on this event loop while the tools talk through it.
    const run = (command: string, args: string[], input?: string) =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] })
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (d) => (stdout += d))
        child.stderr.on('data', (d) => (stderr += d))
        child.on('error', reject)
        child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${args.at(-1)}: exit ${code}: ${stderr}`))))
        child.stdin.end(input ?? '')
      })
    const log4j = `-Dlog4j2.configurationFile=${join(ROOT, 'tools/kafka/log4j2-tools.properties')}`
    const java = (mainClass: string, args: string[], input?: string) => run('java', ['-Xmx256m', log4j, '-cp', `${jars}/*`, mainClass, ...args], input)
    await run('bash', [join(ROOT, 'tools/kafka/run-broker.sh'), ...['--data-dir', data, '--port', String(brokerPort)], ...['--set', `advertised.listeners=PLAINTEXT://${bootstrap}`]])
    try {
      const passes: Array<{ topic: string; caps: Array<[number, number]> }> = [
        {
          topic: 'capture-latest',
          caps: [
            [ApiKey.Produce, 11],
            [ApiKey.Fetch, 17],
            [ApiKey.ListOffsets, 9],
          ],
        },
        {
          topic: 'capture-classic',
          caps: [
            [ApiKey.Produce, 8],
            [ApiKey.Fetch, 11],
            [ApiKey.ListOffsets, 5],
          ],
        },
      ]
      mkdirSync(OUT, { recursive: true })
      for (const pass of passes) {
        caps = new Map(pass.caps)
        await java('org.apache.kafka.tools.TopicCommand', ['--bootstrap-server', bootstrap, '--create', '--topic', pass.topic, '--partitions', '1'])
        const first = exchanges.length
        await java(
          'org.apache.kafka.tools.ConsoleProducer',
          ['--bootstrap-server', bootstrap, '--topic', pass.topic, '--reader-property', 'parse.key=true', '--reader-property', 'key.separator=:'],
          'k1:hello\nk2:world\n',
        )
        const out = await java('org.apache.kafka.tools.consumer.ConsoleConsumer', [
          ...['--bootstrap-server', bootstrap, '--topic', pass.topic, '--partition', '0', '--offset', 'earliest'],
          ...['--max-messages', '2', '--timeout-ms', '60000'],
        ])
        expect(out.split('\n').filter(Boolean)).toEqual(['hello', 'world'])

        const mine = exchanges.slice(first).filter((e) => e.response !== undefined)
        const pick = (apiKey: number, ok: (e: Exchange) => boolean = () => true) => {
          const e = mine.find((e) => e.apiKey === apiKey && ok(e))
          if (!e) throw new Error(`no ${NAMES[apiKey]} exchange in pass ${pass.topic}`)
          return e
        }
        const withRecords = (e: Exchange) => {
          const r = new Reader(e.response!)
          readResponseHeader(r, e.version >= fetchCodec.flexibleFrom)
          const res: FetchResponse = fetchCodec.decodeResponse(r, e.version)
          return res.responses.some((t) => t.partitions.some((p) => (p.records?.length ?? 0) > 0))
        }
        for (const e of [pick(ApiKey.Produce), pick(ApiKey.ListOffsets), pick(ApiKey.Fetch, withRecords)]) {
          const base = join(OUT, `${NAMES[e.apiKey]}-v${e.version}`)
          writeFileSync(`${base}-request.bin`, e.request)
          writeFileSync(`${base}-response.bin`, e.response!)
        }
      }
    } finally {
      await run('bash', [join(ROOT, 'tools/kafka/stop-broker.sh'), data]).catch(() => undefined)
      proxy.close()
      rmSync(data, { recursive: true, force: true })
    }
  })
})
