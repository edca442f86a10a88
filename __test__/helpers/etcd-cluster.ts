/**
 * Brokers in cluster mode in this process (real sockets, real files) on a real etcd
 * (helpers/etcd.ts): `start(id)` starts broker `id` (again, on its data dir, after a stop), with
 * short session and replica timings for tests; `close()` stops every broker and etcd.
 */
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { createLogger, silentLogger } from '../../ts/logger.js'
import { startEtcd, type EtcdServer } from './etcd.js'
import { tempDir } from './tmp.js'

/** broker.session.timeout.ms of the test brokers (etcd's minimum lease is a second). */
export const TEST_SESSION_MS = 1000

export class EtcdBrokerCluster {
  readonly etcd: EtcdServer
  readonly brokers = new Map<number, Broker>()
  private readonly dataDirs = new Map<number, string>()
  private readonly props: Record<string, string>

  private constructor(etcd: EtcdServer, props: Record<string, string>) {
    this.etcd = etcd
    this.props = props
  }

  /** etcd, then brokers `ids` (each with `props` over the test defaults), once every one sees them all. */
  static async start(ids: readonly number[], props: Record<string, string> = {}, perBroker: (id: number) => Record<string, string> = () => ({})): Promise<EtcdBrokerCluster> {
    const cluster = new EtcdBrokerCluster(await startEtcd(), props)
    try {
      for (const id of ids) await cluster.start(id, perBroker(id))
      await until('every broker sees all', () => [...cluster.brokers.values()].every((b) => b.metadataCache.aliveBrokers().length === ids.length))
    } catch (err) {
      await cluster.close()
      throw err
    }
    return cluster
  }

  broker(id: number): Broker {
    const b = this.brokers.get(id)
    if (!b) throw new Error(`broker ${id} is not running`)
    return b
  }

  async start(id: number, props: Record<string, string> = {}): Promise<Broker> {
    const dataDir = this.dataDirs.get(id) ?? tempDir(`ferrolog-cluster-${id}-`)
    this.dataDirs.set(id, dataDir)
    const config = brokerConfigFrom({
      listeners: '127.0.0.1:0',
      'log.dirs': dataDir,
      'node.id': String(id),
      'cluster.metadata': this.etcd.clusterUrl,
      'broker.session.timeout.ms': String(TEST_SESSION_MS),
      'replica.lag.time.max.ms': '2000',
      'replica.fetch.backoff.ms': '100',
      'replica.fetch.wait.max.ms': '100',
      ...this.props,
      ...props,
    })
    const logger = process.env.FERROLOG_TEST_LOGS ? createLogger({ level: 'debug', fields: { nodeId: id } }) : silentLogger
    const broker = await Broker.start(config, { logger })
    this.brokers.set(id, broker)
    return broker
  }

  /** Stops broker `id` cleanly (a controlled shutdown first). */
  async stop(id: number): Promise<void> {
    const b = this.brokers.get(id)
    this.brokers.delete(id)
    await b?.stop()
  }

  async close(): Promise<void> {
    for (const id of [...this.brokers.keys()]) await this.stop(id).catch(() => undefined)
    await this.etcd.close()
  }
}

/**
 * Polls `check` every 25 ms until it returns something truthy, or throws after `timeoutMs`. A check
 * that throws counts as "not yet" (state read before a broker applied the change, such as a log not
 * yet created); its last error is named if time runs out.
 */
export async function until<T>(what: string, check: () => T | undefined | null | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const v = check()
      if (v) return v
      lastError = undefined
    } catch (e) {
      lastError = e
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}${lastError ? ` (last check threw: ${String(lastError)})` : ''}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}
