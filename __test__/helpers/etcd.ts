import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A real etcd server (Debian's etcd-server, /usr/bin/etcd) for tests: one member on 127.0.0.1,
 * ephemeral client and peer ports, a temporary data directory. `stop()` (SIGTERM) and `kill()`
 * (SIGKILL) end the process, `start()` starts it again on the same directory and ports, so the
 * keys, revisions and leases it had survive as they do in production. `close()` kills it and
 * removes the directory; every test that calls `startEtcd` must call `close()` (afterEach).
 *
 * With `tls` (startEtcd's option) the client URL is https with the given server certificate,
 * and with `clientCertAuth` etcd wants a client certificate signed by the CA (--client-cert-auth);
 * its health is then read on a plain metrics URL (--listen-metrics-urls).
 *
 * Raft timings are shortened (heartbeat 50 ms, election 500 ms) so that a restarted member
 * becomes leader quickly and leases as short as 1 s are honoured (etcd's minimum lease TTL is
 * 1.5 x election timeout, rounded up to a second).
 */
/** etcd's server TLS: PEM files (the key unencrypted). */
export interface EtcdTls {
  certFile: string
  keyFile: string
  caFile: string
  /** --client-cert-auth: clients need a certificate signed by the CA. */
  clientCertAuth: boolean
}

export class EtcdServer {
  readonly dataDir: string
  readonly clientPort: number
  readonly peerPort: number
  readonly tls: EtcdTls | null
  /** With TLS: the plain URL /health is read on. */
  readonly metricsPort: number
  private child: ChildProcess | null = null
  private stderr = ''

  constructor(dataDir: string, clientPort: number, peerPort: number, tls: EtcdTls | null = null, metricsPort = 0) {
    this.dataDir = dataDir
    this.clientPort = clientPort
    this.peerPort = peerPort
    this.tls = tls
    this.metricsPort = metricsPort
  }

  /** `http(s)://127.0.0.1:<client port>`, as the etcd3 client takes it. */
  get endpoint(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.clientPort}`
  }

  /** `etcd://127.0.0.1:<client port>`, as the broker's `--cluster` takes it. */
  get clusterUrl(): string {
    return `etcd://127.0.0.1:${this.clientPort}`
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  /** Starts the process and waits until /health answers true (10 s at most). */
  async start(): Promise<void> {
    if (this.child) throw new Error('etcd is already running')
    const peer = `http://127.0.0.1:${this.peerPort}`
    const child = spawn(
      'etcd',
      [
        '--name',
        'n0',
        '--data-dir',
        this.dataDir,
        '--listen-client-urls',
        this.endpoint,
        '--advertise-client-urls',
        this.endpoint,
        '--listen-peer-urls',
        peer,
        '--initial-advertise-peer-urls',
        peer,
        '--initial-cluster',
        `n0=${peer}`,
        '--initial-cluster-state',
        'new',
        '--heartbeat-interval',
        '50',
        '--election-timeout',
        '500',
        '--logger',
        'zap',
        '--log-level',
        'error',
        ...(this.tls
          ? [
              '--cert-file',
              this.tls.certFile,
              '--key-file',
              this.tls.keyFile,
              '--trusted-ca-file',
              this.tls.caFile,
              ...(this.tls.clientCertAuth ? ['--client-cert-auth'] : []),
              '--listen-metrics-urls',
              `http://127.0.0.1:${this.metricsPort}`,
            ]
          : []),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    )
    this.child = child
    this.stderr = ''
    child.stderr!.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000)
    })
    const exited = new Promise<never>((_, reject) => child.once('exit', (code, signal) => reject(new Error(`etcd exited (${code ?? signal}) while starting: ${this.stderr}`))))
    exited.catch(() => {})
    child.once('exit', () => {
      if (this.child === child) this.child = null
    })
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const healthy = await Promise.race([this.healthy(), exited])
      if (healthy) return
      await new Promise((r) => setTimeout(r, 50))
    }
    await this.kill()
    throw new Error(`etcd did not become healthy in 10 s: ${this.stderr}`)
  }

  private async healthy(): Promise<boolean> {
    try {
      const url = this.tls ? `http://127.0.0.1:${this.metricsPort}` : this.endpoint
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })
      const body = (await res.json()) as { health?: string }
      return body.health === 'true'
    } catch {
      return false
    }
  }

  /** SIGTERM and wait for the exit. */
  stop(): Promise<void> {
    return this.signal('SIGTERM')
  }

  /** SIGKILL and wait for the exit: a crash; unsynced state is whatever etcd's WAL holds. */
  kill(): Promise<void> {
    return this.signal('SIGKILL')
  }

  /** Kills the process and starts it again on the same data directory and ports. */
  async restart(signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL'): Promise<void> {
    await this.signal(signal)
    await this.start()
  }

  private signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      this.child = null
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      child.once('exit', () => resolve())
      child.kill(signal)
    })
  }

  /** Kills the process and removes its data directory. */
  async close(): Promise<void> {
    await this.kill()
    rmSync(this.dataDir, { recursive: true, force: true })
  }
}

/** `n` distinct free ports on 127.0.0.1 (held open together, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const s = createServer()
          s.once('error', reject)
          s.listen(0, '127.0.0.1', () => resolve(s))
        }),
    ),
  )
  const ports = servers.map((s) => (s.address() as { port: number }).port)
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  return ports
}

/** Starts a fresh etcd in a new temporary directory; the caller closes it. */
export async function startEtcd(options: { tls?: EtcdTls } = {}): Promise<EtcdServer> {
  const dir = mkdtempSync(join(tmpdir(), 'ferrolog-etcd-'))
  const [clientPort, peerPort, metricsPort] = await freePorts(3)
  const server = new EtcdServer(dir, clientPort, peerPort, options.tls ?? null, metricsPort)
  try {
    await server.start()
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw e
  }
  return server
}
