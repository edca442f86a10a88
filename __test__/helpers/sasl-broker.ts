/**
 * A ferrolog broker with a SASL_PLAINTEXT listener, configured as a user would:
 * `listeners=SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0` and the SASL settings given.
 * Clients bootstrap on the SASL port; Metadata answers them with that listener's endpoints, so
 * every connection they open authenticates.
 */
import { createLogger, type Logger } from '../../ts/logger.js'
import type { ListenerInfo } from '../../ts/network/connection.js'
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
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

/** Lines the broker logged, JSON, when `lines` is given (tests that scan them); else silent unless FERROLOG_TEST_LOGS. */
export function lineLogger(lines?: string[]): Logger {
  if (lines) return createLogger({ level: 'debug', write: (line) => lines.push(line) })
  return createLogger({ level: process.env.FERROLOG_TEST_LOGS ? 'debug' : 'error', write: (line) => process.env.FERROLOG_TEST_LOGS && process.stderr.write(line + '\n') })
}

/** Starts the broker and its SASL_PLAINTEXT listener; `props` are server.properties (the SASL ones included). */
/** `dataDir`: a directory the caller removes (a broker shared by a file's tests outlives tempDir's per-test cleanup). */
export async function startSaslBroker(props: Record<string, string>, options: { logger?: Logger; dataDir?: string } = {}): Promise<SaslBroker> {
  const logger = options.logger ?? lineLogger()
  const config = brokerConfigFrom({
    listeners: 'SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0',
    'log.dirs': options.dataDir ?? tempDir('ferrolog-sasl-'),
    'group.initial.rebalance.delay.ms': '0',
    ...props,
  })
  const broker = await Broker.start(config, { backend: 'native', logger })
  return {
    broker,
    port: broker.listenerPort('SASL_PLAINTEXT'),
    plaintextPort: broker.listenerPort('PLAINTEXT'),
    stop: () => broker.stop(),
  }
}
