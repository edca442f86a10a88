/**
 * The two brokers the SASL/OAUTHBEARER interop tests run side by side with the same
 * server.properties: ferrolog (helpers/sasl-broker.ts) and Apache Kafka 4.4
 * (tools/kafka/run-broker.sh), each with a SASL_PLAINTEXT listener whose only mechanism is
 * OAUTHBEARER. Kafka's JVMs (the broker and the Java tools) read the URLs they may fetch (a JWKS,
 * a token endpoint) from a system property, set through JDK_JAVA_OPTIONS; ferrolog has the
 * broker config of that name.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePorts } from './etcd.js'
import { runKafkaBroker, stopKafkaBroker } from './kafka-tools.js'
import { startSaslBroker } from './sasl-broker.js'

/** Kafka's OAuthBearerLoginModule, for sasl.jaas.config. */
export const LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
/** Kafka's broker-side validator of signed tokens by a JWKS (KIP-768). */
export const JWKS_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler'
/** Kafka's client-side login by the client credentials grant (KIP-768). */
export const LOGIN_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler'
/** The URLs an OAUTHBEARER login or validator may fetch: a JVM system property for Kafka, a broker config for ferrolog. */
export const ALLOWED_URLS = 'org.apache.kafka.sasl.oauthbearer.allowed.urls'

export interface Target {
  name: 'ferrolog' | 'kafka'
  /** The SASL_PLAINTEXT listener. */
  port: number
  stop(): Promise<void>
}

/** ferrolog with `props` (server.properties) on its SASL_PLAINTEXT listener. */
export async function startFerrolog(props: Record<string, string>): Promise<Target> {
  const sasl = await startSaslBroker({ 'sasl.enabled.mechanisms': 'OAUTHBEARER', ...props })
  return { name: 'ferrolog', port: sasl.port, stop: () => sasl.stop() }
}

/** Apache Kafka with `props`, its SASL_PLAINTEXT listener beside the PLAINTEXT and CONTROLLER ones. */
export async function startKafka(props: Record<string, string>): Promise<Target> {
  // Not tempDir: that is removed after each test, and the broker lives for the whole describe.
  const dir = mkdtempSync(join(tmpdir(), 'kafka-oauth-'))
  const [port, cport, saslPort] = await freePorts(3)
  const sets = {
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${cport},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
    'sasl.enabled.mechanisms': 'OAUTHBEARER',
    ...props,
  }
  await runKafkaBroker(dir, ['--port', String(port), '--controller-port', String(cport), ...Object.entries(sets).flatMap(([k, v]) => ['--set', `${k}=${v}`])])
  return {
    name: 'kafka',
    port: saslPort,
    stop: () => {
      stopKafkaBroker(dir)
      rmSync(dir, { recursive: true, force: true })
      return Promise.resolve()
    },
  }
}

/** Tells the JVMs started from now on the URLs they may fetch; the returned function puts JDK_JAVA_OPTIONS back. */
export function allowUrlsInJvms(urls: readonly string[]): () => void {
  const previous = process.env.JDK_JAVA_OPTIONS
  process.env.JDK_JAVA_OPTIONS = `-D${ALLOWED_URLS}=${urls.join(',')}`
  return () => {
    if (previous === undefined) delete process.env.JDK_JAVA_OPTIONS
    else process.env.JDK_JAVA_OPTIONS = previous
  }
}
