import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { createLogger, silentLogger } from '../../ts/logger.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { tempDir } from './tmp.js'

/** A broker on 127.0.0.1 and a free port, over a fresh data dir (or `dataDir`). */
export async function startBroker(options: { dataDir?: string; backend?: BackendName; props?: Record<string, string> } = {}): Promise<Broker> {
  const config = brokerConfigFrom({ listeners: '127.0.0.1:0', 'log.dirs': options.dataDir ?? tempDir('ferrolog-broker-'), ...options.props })
  return Broker.start(config, { backend: options.backend ?? 'native', logger: process.env.FERROLOG_TEST_LOGS ? createLogger({ level: 'debug' }) : silentLogger })
}
