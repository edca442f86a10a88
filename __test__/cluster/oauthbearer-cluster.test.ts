/**
 * Three `ferrolog broker --cluster` processes (a real etcd, helpers/cluster-processes.ts) with
 * SASL_PLAINTEXT OAUTHBEARER and Kafka's JWKS validator on every listener, the inter-broker one
 * included, as a Kafka cluster configured for OIDC between brokers:
 *
 *   CLIENT  OAUTHBEARER, tokens checked against the JWKS of the OAuth server on 127.0.0.1
 *   BROKER  the same validator; the brokers log in with the client credentials grant
 *           (listener.name.broker.oauthbearer.sasl.login.callback.handler.class=OAuthBearerLoginCallbackHandler,
 *           its token endpoint, clientId and clientSecret in the listener's JAAS entry)
 *
 * A topic with RF=3 gets its whole ISR (the followers fetch over the OAUTHBEARER inter-broker
 * connections), an idempotent acks=all producer (ferrolog's, with the client credentials grant)
 * writes to it with min.insync.replicas=3 so every acknowledgement waited for both followers, a
 * consumer reads everything back, and the token endpoint saw the brokers' own token requests.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { clientSecurityFrom, closeClientSecurity } from '../../ts/client/client-security.js'
import { Consumer } from '../../ts/client/consumer.js'
import { Producer } from '../../ts/client/producer.js'
import { ClusterProcesses } from '../helpers/cluster-processes.js'
import { AUDIENCE, ISSUER, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js'

const MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
const LOGIN_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler'
const JWKS_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler'
const ALLOWED_URLS = 'org.apache.kafka.sasl.oauthbearer.allowed.urls'
const SECRETS = { broker: 'broker-Secret-11', admin: 'admin-Secret-23', app: 'app-Secret-37' }
const TOPIC = 'oidc-replicated'

let cluster: ClusterProcesses | undefined
let oauth: OAuthServer | undefined

afterEach(async (ctx) => {
  const keep = ctx.task.result?.state === 'fail'
  if (cluster && keep) console.log(`oauthbearer-cluster: kept ${cluster.root}`)
  await cluster?.close(keep)
  cluster = undefined
  oauth?.close()
})

function clientSettings(id: keyof typeof SECRETS): Record<string, string> {
  return {
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism': 'OAUTHBEARER',
    'sasl.login.callback.handler.class': LOGIN_HANDLER,
    'sasl.oauthbearer.token.endpoint.url': oauth!.tokenUrl,
    'sasl.jaas.config': `${MODULE} required clientId="${id}" clientSecret="${SECRETS[id]}" scope="kafka";`,
    [ALLOWED_URLS]: oauth!.tokenUrl,
  }
}

describe('a cluster with OAUTHBEARER and JWKS on every listener (real processes)', () => {
  it('brokers replicate with tokens from the OAuth server; an idempotent acks=all producer and a consumer work through it', async () => {
    oauth = await startOAuthServer(SECRETS)
    const props: Record<string, string> = {
      'listener.security.protocol.map': 'CLIENT:SASL_PLAINTEXT,BROKER:SASL_PLAINTEXT',
      'inter.broker.listener.name': 'BROKER',
      'sasl.enabled.mechanisms': 'OAUTHBEARER',
      'sasl.mechanism.inter.broker.protocol': 'OAUTHBEARER',
      'listener.name.client.oauthbearer.sasl.jaas.config': `${MODULE} required;`,
      'listener.name.client.oauthbearer.sasl.server.callback.handler.class': JWKS_HANDLER,
      'listener.name.broker.oauthbearer.sasl.jaas.config': `${MODULE} required clientId="broker" clientSecret="${SECRETS.broker}" scope="kafka";`,
      'listener.name.broker.oauthbearer.sasl.server.callback.handler.class': JWKS_HANDLER,
      'listener.name.broker.oauthbearer.sasl.login.callback.handler.class': LOGIN_HANDLER,
      'listener.name.broker.oauthbearer.sasl.oauthbearer.token.endpoint.url': oauth.tokenUrl,
      'sasl.oauthbearer.jwks.endpoint.url': oauth.jwksUrl,
      'sasl.oauthbearer.expected.issuer': ISSUER,
      'sasl.oauthbearer.expected.audience': AUDIENCE,
      [ALLOWED_URLS]: `${oauth.jwksUrl},${oauth.tokenUrl}`,
    }
    const admin = clientSecurityFrom(clientSettings('admin'))
    try {
      const c = (cluster = await ClusterProcesses.start({ brokers: 3, listeners: ['CLIENT', 'BROKER'], props, clientSecurity: admin }))
      await c.createTopic(TOPIC, { partitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '3' } })
      await c.waitForFullIsr(TOPIC, 60_000)

      const producer = new Producer({ bootstrapServers: c.bootstrap, acks: 'all', 'enable.idempotence': true, ...clientSettings('app') })
      const values = Array.from({ length: 30 }, (_, i) => `v${i}`)
      try {
        const acked = await Promise.all(values.map((value, i) => producer.send({ topic: TOPIC, partition: i % 3, value })))
        expect(acked.map((m) => m.offset >= 0n)).toEqual(values.map(() => true))
      } finally {
        await producer.close()
      }
      const consumer = new Consumer({ bootstrapServers: c.bootstrap, groupId: 'oidc-readers', 'auto.offset.reset': 'earliest', ...clientSettings('app') })
      const read: string[] = []
      try {
        consumer.subscribe([TOPIC])
        const deadline = Date.now() + 60_000
        while (read.length < values.length && Date.now() < deadline) for (const b of await consumer.poll(500)) for (const r of b.records) read.push(r.value!.toString())
      } finally {
        await consumer.close()
      }
      expect(read.sort()).toEqual([...values].sort())
      expect(c.unexpectedExits()).toEqual([])

      // The brokers got their own tokens, by the client credentials grant, with the listener's scope.
      const brokerRequests = oauth.requests.filter((r) => r.clientId === 'broker')
      expect(brokerRequests.length).toBeGreaterThanOrEqual(1)
      expect(brokerRequests.every((r) => r.ok && r.scope === 'kafka')).toBe(true)
      console.log(
        `oauthbearer-cluster: token requests: broker ${brokerRequests.length}, admin ${oauth.requests.filter((r) => r.clientId === 'admin').length}, app ${oauth.requests.filter((r) => r.clientId === 'app').length}`,
      )
    } finally {
      closeClientSecurity(admin)
    }
  }, 240_000)
})
