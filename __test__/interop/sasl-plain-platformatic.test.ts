/**
 * SASL/PLAIN with @platformatic/kafka 1.x (SaslHandshake v1, SaslAuthenticate v2) on a
 * SASL_PLAINTEXT listener: a producer and a consumer authenticate and exchange records; a wrong
 * password is refused with SASL_AUTHENTICATION_FAILED's message.
 */
import { Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka'
import { afterEach, describe, expect, it } from 'vitest'
import { plainJaas, startSaslBroker, type SaslBroker } from '../helpers/sasl-broker.js'

let sasl: SaslBroker | undefined
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined)
  await sasl?.stop()
  sasl = undefined
})

describe('SASL/PLAIN with @platformatic/kafka', () => {
  it('produces and consumes as a PLAIN user; a wrong password is refused', async () => {
    sasl = await startSaslBroker({ 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': plainJaas({ alice: 'alice-secret' }) })
    await sasl.broker.createTopic('plat-sasl', 1, {})
    const bootstrapBrokers = [`127.0.0.1:${sasl.port}`]
    const producer = new Producer({ clientId: 'plat-sasl', bootstrapBrokers, serializers: stringSerializers, sasl: { mechanism: 'PLAIN', username: 'alice', password: 'alice-secret' }, retries: 3 })
    cleanups.push(() => producer.close())
    await producer.send({
      messages: [
        { topic: 'plat-sasl', key: 'k', value: 'v1' },
        { topic: 'plat-sasl', key: 'k', value: 'v2' },
      ],
    })
    const consumer = new Consumer({
      clientId: 'plat-sasl-consumer',
      groupId: 'plat-sasl-group',
      bootstrapBrokers,
      deserializers: stringDeserializers,
      sasl: { mechanism: 'PLAIN', username: 'alice', password: 'alice-secret' },
      maxWaitTime: 200,
      timeout: 10_000,
    })
    cleanups.push(() => consumer.close(true) as unknown as Promise<void>)
    const stream = await consumer.consume({ topics: ['plat-sasl'], mode: 'earliest', autocommit: false })
    const values: string[] = []
    for await (const message of stream) {
      values.push(message.value as string)
      if (values.length === 2) break
    }
    await stream.close()
    expect(values).toEqual(['v1', 'v2'])

    const intruder = new Producer({ clientId: 'plat-sasl-bad', bootstrapBrokers, serializers: stringSerializers, sasl: { mechanism: 'PLAIN', username: 'alice', password: 'nope' }, retries: 0 })
    cleanups.push(() => intruder.close())
    const err = await intruder.send({ messages: [{ topic: 'plat-sasl', value: 'x' }] }).then(
      () => null,
      (e: Error) => e,
    )
    expect(err).not.toBeNull()
    // The client's error chain: network error <- PLT_KFK_AUTHENTICATION <- the SaslAuthenticate v2 response's error.
    const chain: string[] = []
    const walk = (e: unknown, depth: number): void => {
      if (!e || typeof e !== 'object' || depth > 8) return
      const o = e as { code?: unknown; message?: unknown; apiCode?: unknown; errors?: unknown; cause?: unknown; response?: unknown }
      chain.push(`${String(o.code)} ${String(o.message)} ${String(o.apiCode)} ${JSON.stringify(o.response ?? null, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`)
      if (Array.isArray(o.errors)) for (const inner of o.errors) walk(inner, depth + 1)
      walk(o.cause, depth + 1)
    }
    walk(err, 0)
    const text = chain.join('\n')
    expect(text).toContain('PLT_KFK_AUTHENTICATION')
    expect(text).toContain('Authentication failed: Invalid username or password')
  }, 60_000)
})
