// README.md "An embedded SASL_SSL broker in a vitest test": the lines between the two markers are
// the README's snippet, verbatim but for the import path ('ferrolog' there); the last test checks.
// --- README snippet ---
import { Consumer, startBroker, type SecuredBroker } from '../../ts/index.js'
import { Kafka } from 'kafkajs'
import { afterAll, beforeAll, expect, it } from 'vitest'

let broker: SecuredBroker
beforeAll(async () => {
  broker = await startBroker({
    security: {
      protocol: 'SASL_SSL', // or SASL_PLAINTEXT; SSL with client certificates
      mechanisms: ['SCRAM-SHA-512', 'PLAIN'],
      users: { alice: 'alice-secret', admin: 'admin-secret' },
      superUsers: ['admin'],
      acls: [{ principal: 'User:alice', operation: 'ALL', resourceType: 'TOPIC', name: 'orders', patternType: 'PREFIXED' }],
    }, // a throw-away CA and certificate are made for it
  })
})
afterAll(() => broker.stop())

it('produces with kafkajs and consumes with ferrolog over SASL_SSL', async () => {
  const alice = broker.security.clientSettings('alice') // SCRAM-SHA-512, the first mechanism
  const producer = new Kafka({ clientId: 'test', ...alice.kafkajs }).producer() // brokers, ssl: { ca }, sasl
  await producer.connect()
  await producer.send({ topic: 'orders', messages: [{ value: 'hello' }] })
  await producer.disconnect()

  const consumer = new Consumer({ ...alice.ferrolog, 'auto.offset.reset': 'earliest' }) // security.protocol, sasl.*, ssl.ca.pem
  consumer.assign([{ topic: 'orders', partition: 0 }])
  const [batch] = await consumer.poll(10_000)
  expect(batch.records[0].value?.toString()).toBe('hello')
  await consumer.close()
})
// --- README snippet ---

import { readFileSync } from 'node:fs'
import { join } from 'node:path'

it('is the snippet the README shows', () => {
  const [, snippet] = readFileSync(__filename, 'utf8').split('// --- README snippet ---\n')
  const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8')
  expect(readme).toContain('```ts\n' + snippet.replace("from '../../ts/index.js'", "from 'ferrolog'") + '```\n')
})
