#!/usr/bin/env node
// A tiny Kafka capture proxy: forwards every connection to a broker and writes each request and
// response frame (without its int32 size prefix, header included) to OUT as it passes.
//
//   node tools/kafka/capture-proxy.mjs --listen PORT --target HOST:PORT --out DIR
//        [--api-versions-max N] [--cap KEY:MAX]...
//
// Files: DIR/NNNN-cC-<apiKey>-v<version>-<correlationId>-request.bin and ...-response.bin, plus
// DIR/index.jsonl (one line per frame: file, conn, kind, apiKey, version, correlationId, clientId,
// size). The response file holds the broker's bytes as sent.
//
// --api-versions-max N: an ApiVersions request above vN is answered by the proxy itself, as
//   ferrolog would (KIP-511: UNSUPPORTED_VERSION, v0 body, ApiVersions 0-N), so the client
//   retries with a version <= N; that retry goes to the broker.
// --cap KEY:MAX: in ApiVersions responses passed to the client, lower KEY's maxVersion to MAX
//   (patched in place, same length), so the client uses versions we serve. The file keeps the
//   broker's original bytes.
// Prints "listening=PORT" once ready; stops on SIGTERM/SIGINT.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'

const args = process.argv.slice(2)
let listen = 0
let target = ''
let out = ''
let apiVersionsMax = Infinity
const caps = new Map()
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  if (a === '--listen') listen = Number(args[++i])
  else if (a === '--target') target = args[++i]
  else if (a === '--out') out = args[++i]
  else if (a === '--api-versions-max') apiVersionsMax = Number(args[++i])
  else if (a === '--cap') {
    const [key, max] = args[++i].split(':').map(Number)
    caps.set(key, max)
  } else throw new Error(`capture-proxy: unknown argument ${a}`)
}
if (!target || !out) throw new Error('capture-proxy: --target and --out are required')
const [targetHost, targetPort] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))]
mkdirSync(out, { recursive: true })

const API_VERSIONS = 18
let seq = 0
let connections = 0

function save(conn, kind, apiKey, version, correlationId, clientId, frame) {
  const n = String(seq++).padStart(4, '0')
  const file = `${n}-c${conn}-${apiKey}-v${version}-${correlationId}-${kind}.bin`
  writeFileSync(join(out, file), frame)
  const entry = { file, conn, kind, apiKey, version, correlationId, clientId, size: frame.length }
  appendFileSync(join(out, 'index.jsonl'), JSON.stringify(entry) + '\n')
}

/** The clientId of a request header v1/v2 (int16-length nullable string after correlationId). */
function clientIdOf(frame) {
  const len = frame.readInt16BE(8)
  return len < 0 ? null : frame.toString('utf8', 10, 10 + len)
}

/** Splits a byte stream into size-prefixed frames. */
function framer(onFrame) {
  let pending = Buffer.alloc(0)
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk
    while (pending.length >= 4) {
      const size = pending.readInt32BE(0)
      if (pending.length < 4 + size) break
      onFrame(Buffer.from(pending.subarray(4, 4 + size)))
      pending = pending.subarray(4 + size)
    }
  }
}

function prefixed(frame) {
  const size = Buffer.alloc(4)
  size.writeInt32BE(frame.length)
  return Buffer.concat([size, frame])
}

/** ApiVersions v0 body: UNSUPPORTED_VERSION (35), apiKeys [ApiVersions 0..max]. */
function unsupportedApiVersions(correlationId, max) {
  const b = Buffer.alloc(4 + 2 + 4 + 6)
  b.writeInt32BE(correlationId, 0)
  b.writeInt16BE(35, 4)
  b.writeInt32BE(1, 6)
  b.writeInt16BE(API_VERSIONS, 10)
  b.writeInt16BE(0, 12)
  b.writeInt16BE(max, 14)
  return b
}

function readUnsignedVarint(buf, at) {
  let value = 0
  for (let shift = 0; ; shift += 7) {
    const b = buf[at++]
    value |= (b & 0x7f) << shift
    if ((b & 0x80) === 0) return [value >>> 0, at]
  }
}

/** Lowers capped maxVersions in an ApiVersions response frame (header v0 + body), in place. */
function capApiVersions(frame, version) {
  if (frame.readInt16BE(4) !== 0) return frame
  let at = 6
  let count
  if (version >= 3) {
    ;[count, at] = readUnsignedVarint(frame, at)
    count -= 1
  } else {
    count = frame.readInt32BE(at)
    at += 4
  }
  const patched = Buffer.from(frame)
  for (let i = 0; i < count; i++) {
    const key = patched.readInt16BE(at)
    const max = patched.readInt16BE(at + 4)
    if (caps.has(key) && max > caps.get(key)) patched.writeInt16BE(caps.get(key), at + 4)
    at += 6
    if (version >= 3) at += 1 // the entry's empty tagged fields
  }
  return patched
}

const server = net.createServer((client) => {
  const conn = connections++
  const inflight = new Map()
  const broker = net.connect(targetPort, targetHost)
  client.on('data', framer((frame) => {
    const apiKey = frame.readInt16BE(0)
    const version = frame.readInt16BE(2)
    const correlationId = frame.readInt32BE(4)
    const clientId = clientIdOf(frame)
    save(conn, 'request', apiKey, version, correlationId, clientId, frame)
    if (apiKey === API_VERSIONS && version > apiVersionsMax) {
      client.write(prefixed(unsupportedApiVersions(correlationId, apiVersionsMax)))
      return
    }
    inflight.set(correlationId, { apiKey, version, clientId })
    broker.write(prefixed(frame))
  }))
  broker.on('data', framer((frame) => {
    const correlationId = frame.readInt32BE(0)
    const req = inflight.get(correlationId) ?? { apiKey: -1, version: -1, clientId: null }
    inflight.delete(correlationId)
    save(conn, 'response', req.apiKey, req.version, correlationId, req.clientId, frame)
    client.write(prefixed(req.apiKey === API_VERSIONS && caps.size ? capApiVersions(frame, req.version) : frame))
  }))
  const close = () => {
    client.destroy()
    broker.destroy()
  }
  client.on('close', close).on('error', close)
  broker.on('close', close).on('error', close)
})

server.listen(listen, '127.0.0.1', () => console.log(`listening=${server.address().port}`))
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0))
