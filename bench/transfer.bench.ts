/**
 * Transfer alone (SPEC.md section 9, issue #5 figure 1): bytes moved per CPU-second of the
 * sending process, 1 MiB slices of a segment-sized file in a warm page cache, to a socket on
 * 127.0.0.1 whose reader is another process (so that its CPU does not count):
 *
 * 1. native: ferrolog's transfer engine (ts/network/transfer.ts -> crates/transfer), sendfile on
 *    its own thread, jobs of one 1 MiB FileRecords each, a few in flight on separate sockets;
 * 2. pure TypeScript: the copy path, a positioned read of 1 MiB into a buffer and socket.write,
 *    a few buffers in flight;
 * 3. baseline: a minimal blocking sendfile loop in Rust (crates/transfer/examples/sendfile_loop.rs),
 *    a process of its own, the ceiling of what a sendfile path can do here.
 *
 * CPU is user+system time of the sending process over the run (process.cpuUsage covers every
 * thread of it, the engine's included). All three run in one go, in turn, and are reported as
 * GB per CPU-second and as ratios. Results go to stdout and to bench/.out/transfer.json.
 *
 *   npm run build && node dist/bench/transfer.bench.js       (TRANSFER_GB=2 per case by default)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileRecords, socketFd, Transfer } from '../ts/network/transfer.js'

const SLICE = 1 << 20
const FILE_BYTES = 256 << 20
const TOTAL = Math.round(Number(process.env.TRANSFER_GB ?? 2) * 2 ** 30)
const STREAMS = 2
const root = join(__dirname, '..', '..')

/** A reader process: accepts connections on 127.0.0.1 and discards what arrives. */
const SINK = `
const net = require('node:net')
const server = net.createServer((s) => { s.on('data', () => {}); s.on('error', () => {}) })
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'))
process.stdin.on('end', () => process.exit(0)); process.stdin.resume()
`

async function startSink(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', SINK], { stdio: ['pipe', 'pipe', 'inherit'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())))
    child.once('exit', () => reject(new Error('sink exited')))
  })
  return { port, child }
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s))
    s.once('error', reject)
  })
}

interface Measure {
  bytes: number
  cpuSeconds: number
  wallSeconds: number
}

async function measure(run: () => Promise<number>): Promise<Measure> {
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  const bytes = await run()
  const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9
  const cpu = process.cpuUsage(cpu0)
  return { bytes, cpuSeconds: (cpu.user + cpu.system) / 1e6, wallSeconds }
}

/** Native: each stream sends 1 MiB FileRecords jobs one after another until its share is sent. */
async function native(file: string, port: number): Promise<Measure> {
  const engine = new Transfer()
  const sockets = await Promise.all(Array.from({ length: STREAMS }, () => open(port)))
  try {
    return await measure(async () => {
      const share = TOTAL / STREAMS
      const sent = await Promise.all(
        sockets.map(async (socket, k) => {
          const fd = socketFd(socket)!
          let done = 0
          let position = (k * SLICE * 7) % FILE_BYTES
          while (done < share) {
            const slice = FileRecords.open(file, position, SLICE)
            const job = engine.send(fd, [slice])
            slice.close()
            done += await job.done
            position = (position + SLICE) % FILE_BYTES
          }
          return done
        }),
      )
      return sent.reduce((a, b) => a + b, 0)
    })
  } finally {
    for (const s of sockets) s.destroy()
    engine.close()
  }
}

/** Pure TypeScript: pread 1 MiB into a buffer, socket.write it; two buffers in flight per stream. */
async function pure(file: string, port: number): Promise<Measure> {
  const sockets = await Promise.all(Array.from({ length: STREAMS }, () => open(port)))
  const fd = openSync(file, 'r')
  try {
    return await measure(async () => {
      const share = TOTAL / STREAMS
      const sent = await Promise.all(
        sockets.map(
          (socket, k) =>
            new Promise<number>((resolve, reject) => {
              let done = 0
              let queued = 0
              let inFlight = 0
              let position = (k * SLICE * 7) % FILE_BYTES
              const pump = (): void => {
                while (inFlight < 2 && queued < share) {
                  const buf = Buffer.allocUnsafe(SLICE)
                  let n = 0
                  while (n < SLICE) n += readSync(fd, buf, n, SLICE - n, position + n)
                  position = (position + SLICE) % FILE_BYTES
                  queued += SLICE
                  inFlight++
                  socket.write(buf, (err) => {
                    if (err) return reject(err)
                    inFlight--
                    done += SLICE
                    if (done >= share) resolve(done)
                    else pump()
                  })
                }
              }
              pump()
            }),
        ),
      )
      return sent.reduce((a, b) => a + b, 0)
    })
  } finally {
    closeSync(fd)
    for (const s of sockets) s.destroy()
  }
}

/** The minimal sendfile loop in Rust, in a process of its own (it reports its own CPU time). */
function rustLoop(file: string, port: number): Promise<Measure> {
  const bin = join(root, 'target', 'release', 'examples', 'sendfile_loop')
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [file, `127.0.0.1:${port}`, String(SLICE), String(TOTAL)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`sendfile_loop exited with ${code}`))
      const r = JSON.parse(out.trim().split('\n').at(-1)!) as { bytes: number; cpuSeconds: number; wallSeconds: number }
      resolve(r)
    })
  })
}

function gbPerCpuSecond(m: Measure): number {
  return m.bytes / 1e9 / m.cpuSeconds
}

async function main(): Promise<void> {
  execFileSync('cargo', ['build', '--release', '--quiet', '-p', 'ferrolog-transfer', '--example', 'sendfile_loop'], { cwd: root, stdio: 'inherit' })
  const dir = mkdtempSync(join(tmpdir(), 'ferrolog-transfer-bench-'))
  const file = join(dir, '00000000000000000000.log')
  const sink = await startSink()
  try {
    const block = Buffer.alloc(1 << 20)
    for (let i = 0; i < block.length; i++) block[i] = (i * 31 + 7) & 0xff
    const fd = openSync(file, 'w')
    for (let i = 0; i < FILE_BYTES / block.length; i++) writeFileSync(fd, block)
    closeSync(fd)
    readFileSync(file) // warm the page cache

    const load0 = loadavg()[0]
    const rows: Array<{ case: string; m: Measure }> = []
    // Each case twice, interleaved, the better run of each kept: the machine is shared.
    for (let round = 0; round < 2; round++) {
      rows.push({ case: 'native (transfer engine, sendfile)', m: await native(file, sink.port) })
      rows.push({ case: 'pure TypeScript (pread + socket.write)', m: await pure(file, sink.port) })
      rows.push({ case: 'minimal Rust sendfile loop', m: await rustLoop(file, sink.port) })
    }
    const load1 = loadavg()[0]
    const best = new Map<string, Measure>()
    for (const { case: c, m } of rows) if (!best.has(c) || gbPerCpuSecond(m) > gbPerCpuSecond(best.get(c)!)) best.set(c, m)
    const nativeM = best.get('native (transfer engine, sendfile)')!
    const pureM = best.get('pure TypeScript (pread + socket.write)')!
    const loopM = best.get('minimal Rust sendfile loop')!
    console.log(`transfer alone: ${(TOTAL / 2 ** 30).toFixed(2)} GiB per case in 1 MiB slices of a ${FILE_BYTES >> 20} MiB file (warm), ${STREAMS} sockets, reader in another process`)
    console.log(`machine: ${cpus()[0]?.model} x${cpus().length}, Node ${process.version}, load ${load0.toFixed(2)} -> ${load1.toFixed(2)}`)
    console.log('| case | GB per CPU-second | CPU-s | wall s | GB/s wall |')
    console.log('|---|---:|---:|---:|---:|')
    for (const [c, m] of best) console.log(`| ${c} | ${gbPerCpuSecond(m).toFixed(2)} | ${m.cpuSeconds.toFixed(2)} | ${m.wallSeconds.toFixed(2)} | ${(m.bytes / 1e9 / m.wallSeconds).toFixed(2)} |`)
    const vsPure = gbPerCpuSecond(nativeM) / gbPerCpuSecond(pureM)
    const vsLoop = gbPerCpuSecond(nativeM) / gbPerCpuSecond(loopM)
    console.log(`native / pure TypeScript: ${vsPure.toFixed(2)}x (target >= 3x: ${vsPure >= 3 ? 'met' : 'NOT met'})`)
    console.log(`native / minimal sendfile loop: ${(vsLoop * 100).toFixed(0)}% (target >= 90%: ${vsLoop >= 0.9 ? 'met' : 'NOT met'})`)
    const out = join(root, 'bench', '.out')
    mkdirSync(out, { recursive: true })
    writeFileSync(join(out, 'transfer.json'), JSON.stringify({ load: [load0, load1], rows: rows.map((r) => ({ case: r.case, ...r.m })), vsPure, vsLoop }, null, 2))
  } finally {
    sink.child.stdin!.end()
    sink.child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
