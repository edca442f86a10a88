#!/usr/bin/env node
// A/B in one process: how a Connection cut request frames out of its chunks before f8ec324 (join
// every buffered chunk) and since (a view, or a copy of exactly the frame), on a stream of 16.5 KB
// frames (a Java producer's 16 KiB batch and headers) in 16 KiB chunks (node:tls: one record a
// chunk) and 64 KiB chunks (plaintext reads). Both cuts are copied here from ts/network/connection.ts.
//   node bench/frame-cut-ab.mjs
import { randomBytes } from 'node:crypto'
const FRAME = 16_500,
  N = 20_000
function make(chunk) {
  const one = Buffer.alloc(4 + FRAME)
  one.writeInt32BE(FRAME, 0)
  randomBytes(FRAME).copy(one, 4)
  const stream = Buffer.concat(Array(64).fill(one))
  const chunks = []
  for (let at = 0; at < stream.length; at += chunk) chunks.push(stream.subarray(at, at + chunk))
  return chunks
}
class Old {
  chunks = []
  buffered = 0
  peek(n) {
    const f = this.chunks[0]
    if (f.length >= n) return f
    const j = Buffer.concat(this.chunks)
    this.chunks = [j]
    return j
  }
  take(n) {
    const j = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
    const out = j.subarray(0, n)
    const rest = j.subarray(n)
    this.chunks = rest.length > 0 ? [rest] : []
    this.buffered -= n
    return out
  }
  push(c, sink) {
    this.chunks.push(c)
    this.buffered += c.length
    while (this.buffered >= 4) {
      const size = this.peek(4).readInt32BE(0)
      if (this.buffered < 4 + size) return
      sink(this.take(4 + size).subarray(4))
    }
  }
}
class New {
  chunks = []
  buffered = 0
  peekSize() {
    const f = this.chunks[0]
    if (f.length >= 4) return f.readInt32BE(0)
    const h = Buffer.allocUnsafe(4)
    let at = 0
    for (const c of this.chunks) {
      at += c.copy(h, at, 0, Math.min(c.length, 4 - at))
      if (at === 4) break
    }
    return h.readInt32BE(0)
  }
  take(n) {
    this.buffered -= n
    const f = this.chunks[0]
    if (f.length >= n) {
      if (f.length === n) this.chunks.shift()
      else this.chunks[0] = f.subarray(n)
      return f.subarray(0, n)
    }
    const out = Buffer.allocUnsafe(n)
    let at = 0
    while (at < n) {
      const c = this.chunks[0]
      const w = Math.min(c.length, n - at)
      c.copy(out, at, 0, w)
      at += w
      if (w === c.length) this.chunks.shift()
      else this.chunks[0] = c.subarray(w)
    }
    return out
  }
  push(c, sink) {
    this.chunks.push(c)
    this.buffered += c.length
    while (this.buffered >= 4) {
      const size = this.peekSize()
      if (this.buffered < 4 + size) return
      this.take(4)
      sink(this.take(size))
    }
  }
}
for (const chunk of [16_384, 65_536]) {
  const chunks = make(chunk)
  const res = { old: [], new: [] }
  for (let round = 0; round < 9; round++)
    for (const [name, K] of round % 2
      ? [
          ['new', New],
          ['old', Old],
        ]
      : [
          ['old', Old],
          ['new', New],
        ]) {
      let frames = 0
      const t0 = process.cpuUsage()
      while (frames < N) {
        const c = new K()
        for (const x of chunks)
          c.push(x, (f) => {
            frames++
            if (f.length !== FRAME) throw new Error(`a frame of ${f.length} bytes, ${FRAME} sent`)
          })
      }
      const u = process.cpuUsage(t0)
      if (round > 0) res[name].push((u.user + u.system) / frames)
    }
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  console.log(`chunks of ${chunk} B, frames of ${FRAME} B: old ${med(res.old).toFixed(2)} us/frame, new ${med(res.new).toFixed(2)} us/frame`)
}
