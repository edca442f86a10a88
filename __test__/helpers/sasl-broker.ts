/**
 * A ferrolog broker whose clients come in on a SASL_PLAINTEXT listener: the broker (its
 * KafkaApis and handlers) with a second SocketServer whose connections have the SASL
 * authenticator, on a port the broker advertises (so every connection a client opens after
 * Metadata authenticates too). Until `listeners=SASL_PLAINTEXT://...` starts such a listener by
 * itself, this is the least invasive way to serve one.
 */
import { createServer } from 'node:net'
import { createLogger, type Logger } from '../../ts/logger.js'
import type { ListenerInfo } from '../../ts/network/connection.js'
import { SocketServer } from '../../ts/network/socket-server.js'
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { saslAuthenticatorFactory } from '../../ts/server/sasl-mechanisms.js'
import { tempDir } from './tmp.js'

export const SASL_LISTENER: ListenerInfo = { listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT' }

/** Kafka's form of PLAIN's users, for `listener.name.sasl_plaintext.plain.sasl.jaas.config`. */
export function plainJaas(users: Record<string, string>): string {
  const options = Object.entries(users)
    .map(([user, password]) => `user_${user}="${password.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
    .join(' ')
  return `org.apache.kafka.common.security.plain.PlainLoginModule required ${options};`
}

export interface SaslBroker {
  broker: Broker
  /** The SASL_PLAINTEXT listener's port (advertised). */
  port: number
  /** The broker's own PLAINTEXT port. */
  plaintextPort: number
  stop(): Promise<void>
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const address = s.address()
      const port = typeof address === 'object' && address ? address.port : 0
      s.close(() => resolve(port))
    })
  })
}

/** Lines the broker logged, JSON, when `lines` is given (tests that scan them); else silent unless FERROLOG_TEST_LOGS. */
export function lineLogger(lines?: string[]): Logger {
  if (lines) return createLogger({ level: 'debug', write: (line) => lines.push(line) })
  return createLogger({ level: process.env.FERROLOG_TEST_LOGS ? 'debug' : 'error', write: (line) => process.env.FERROLOG_TEST_LOGS && process.stderr.write(line + '\n') })
}

/** Starts the broker and its SASL_PLAINTEXT listener; `props` are server.properties (the SASL ones included). */
export async function startSaslBroker(props: Record<string, string>, options: { logger?: Logger } = {}): Promise<SaslBroker> {
  const logger = options.logger ?? lineLogger()
  const port = await freePort()
  const config = brokerConfigFrom({ listeners: '127.0.0.1:0', 'advertised.listeners': `127.0.0.1:${port}`, 'log.dirs': tempDir('ferrolog-sasl-'), 'group.initial.rebalance.delay.ms': '0', ...props })
  const broker = await Broker.start(config, { backend: 'native', logger })
  let server: SocketServer
  try {
    server = new SocketServer((frame, connection) => broker.apis.handle(frame, connection), {
      host: '127.0.0.1',
      port,
      maxRequestBytes: broker.config.maxRequestBytes,
      logger,
      listener: SASL_LISTENER,
      authenticator: saslAuthenticatorFactory(broker.config, SASL_LISTENER, broker, logger) ?? undefined,
    })
    await server.listen()
  } catch (err) {
    await broker.stop()
    throw err
  }
  return {
    broker,
    port,
    plaintextPort: broker.port,
    async stop() {
      await server.stop()
      await broker.stop()
    },
  }
}
