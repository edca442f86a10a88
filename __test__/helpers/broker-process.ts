import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { connectTo, KafkaWire } from './kafka-socket.js'
import { tempDir } from './tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

/** A `ferrolog broker` in its own process (dist/ must be built), on 127.0.0.1 and a free port. */
export interface BrokerProcess {
  port: number
  pid: number
  dataDir: string
  child: ChildProcess
  /** What it wrote to stderr so far. */
  stderr(): string
  /** SIGTERM, then SIGKILL after 10 s; resolves once it has exited. */
  stop(): Promise<void>
}

/**
 * `dataDir`: an existing data dir instead of a fresh one. `openFileLimit`: the broker runs under
 * `prlimit --nofile=N:N` (soft and hard RLIMIT_NOFILE both N). `backend` unset: the broker's
 * default. `env`: added to the broker's environment (FERROLOG_NATIVE=0 hides the binding).
 * `port`: listen there instead of a free port (a broker restarted where its clients look for it).
 */
export async function spawnBroker(options: {
  backend?: BackendName
  env?: Record<string, string>
  props?: Record<string, string>
  dataDir?: string
  openFileLimit?: number
  port?: number
}): Promise<BrokerProcess> {
  const dataDir = options.dataDir ?? tempDir('ferrolog-broker-')
  const args = [CLI, 'broker', '--data-dir', dataDir, '--listen', `127.0.0.1:${options.port ?? 0}`]
  if (options.backend) args.push('--backend', options.backend)
  const env = { ...process.env, ...options.env }
  if (options.props) {
    const file = join(tempDir('ferrolog-config-'), 'server.properties')
    writeFileSync(
      file,
      Object.entries(options.props)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    )
    args.push('--config', file)
  }
  // prlimit execs the command: the child's pid is the broker's.
  const child =
    options.openFileLimit === undefined
      ? spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
      : spawn('prlimit', [`--nofile=${options.openFileLimit}:${options.openFileLimit}`, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
  let out = ''
  let err = ''
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start in 20 s: ${err}`)), 20_000)
    child.on('exit', (code) => reject(new Error(`broker exited with ${code}: ${err}`)))
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /listening on [^:]+:(\d+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
  })
  return {
    port,
    pid: child.pid!,
    dataDir,
    child,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
        await exited
        clearTimeout(timer)
      }
    },
  }
}

/** Creates `name` with `partitions` partitions (and `configs`) over a connection of its own. */
export async function createTopicOn(port: number, name: string, partitions: number, configs: Record<string, string> = {}): Promise<void> {
  const wire = new KafkaWire(await connectTo(port), 'create-topic')
  try {
    const res = await wire.send(createTopicsCodec, 5, {
      topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })) }],
      timeoutMs: 10_000,
      validateOnly: false,
    })
    const result = res.topics[0]
    if (result.errorCode !== 0) throw new Error(`CreateTopics ${name}: error ${result.errorCode} ${result.errorMessage}`)
  } finally {
    wire.close()
  }
}
