/**
 * Brokers of a cluster reaching each other on the inter-broker listener with its security
 * (ts/server/inter-broker-security.ts), in this process on a real etcd (helpers/etcd-cluster.ts):
 *
 * - SSL with client certificates (ssl.client.auth=required on the inter-broker listener, the
 *   principal mapped from the certificate to User:broker, a super user): transactions whose
 *   partitions are led by other brokers than the coordinator, so WriteTxnMarkers and the leaders'
 *   AddPartitionsToTxn verification go broker to broker, and the followers replicate the markers;
 * - SASL_PLAINTEXT with SCRAM-SHA-256, the broker's credential kept in etcd and set after the
 *   brokers started, and User:broker not a super user: its follower fetches are refused
 *   TOPIC_AUTHORIZATION_FAILED (Kafka's answer to a follower without CLUSTER_ACTION) and the ISR
 *   shrinks to the leader; CLUSTER_ACTION granted, the follower catches up and is back in the ISR;
 * - the settings Kafka refuses at start, refused at start.
 */
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Kafka, logLevel, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { clientSecurityFrom, closeClientSecurity, type ClientSecurity } from '../../ts/client/client-security.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { ConfigError } from '../../ts/config/config-def.js'
import { alterUserScramCredentialsCodec } from '../../ts/protocol/apis/alter-user-scram-credentials.js'
import { createAclsCodec } from '../../ts/protocol/apis/create-acls.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { defaultCreateTopicsRequest } from '../../ts/protocol/messages/create-topics-request.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { decodeEndTransactionMarker } from '../../ts/protocol/control-record.js'
import { defaultFetchRequest } from '../../ts/protocol/messages/fetch-request.js'
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../ts/security/authorizer/acl.js'
import { STANDARD_AUTHORIZER_CLASS } from '../../ts/security/authorizer/standard-authorizer.js'
import { createCertificateAuthority } from '../../ts/security/certificates.js'
import { ScramFormatter } from '../../ts/security/scram/scram-formatter.js'
import { scramMechanismForName } from '../../ts/security/scram/scram-mechanism.js'
import type { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { interBrokerClientSecurity } from '../../ts/server/inter-broker-security.js'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'
import { fetchKafkaJars, startSecuredKafka, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { startSaslBroker } from '../helpers/sasl-broker.js'
import { tempDir } from '../helpers/tmp.js'

const PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule'
const SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule'
const ZERO_UUID = Buffer.alloc(16)

let cluster: EtcdBrokerCluster | undefined
const producers: Producer[] = []

afterEach(async () => {
  for (const p of producers.splice(0)) await p.disconnect().catch(() => undefined)
  await cluster?.close()
  cluster = undefined
})

async function withClient<T>(port: number, security: ClientSecurity, f: (c: NetworkClient) => Promise<T>): Promise<T> {
  const client = new NetworkClient({ bootstrapServers: `127.0.0.1:${port}`, security, requestTimeoutMs: 10_000, clientId: 'inter-broker-test' })
  try {
    return await f(client)
  } finally {
    await client.close()
  }
}

/** Values and markers of a partition's log on a broker holding it. */
function logContents(b: Broker, topic: string, partition: number): string[] {
  const log = b.logManager.getLog(topic, partition)
  if (!log) return []
  return log.readBatches(log.logStartOffset(), { isolation: 'LOG_END', maxBytes: 1 << 20 }).flatMap((batch) => {
    if (!batch.isControl) return batch.records.map((r) => r.value!.toString())
    return [decodeEndTransactionMarker(batch.records[0].key, batch.records[0].value)?.type ?? '?']
  })
}

/** A follower's Fetch (replicaId set) of `partitions` of `topic` from offset 0, by name (v12). */
function followerFetch(topic: string, partitions: number[], replicaId: number) {
  return {
    ...defaultFetchRequest(),
    replicaId,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    topics: [
      {
        topic,
        topicId: ZERO_UUID,
        partitions: partitions.map((partition) => ({
          partition,
          currentLeaderEpoch: -1,
          fetchOffset: 0n,
          lastFetchedEpoch: -1,
          logStartOffset: -1n,
          partitionMaxBytes: 1 << 20,
          replicaDirectoryId: ZERO_UUID,
        })),
      },
    ],
  }
}

describe('inter-broker security', () => {
  it('SSL with client certificates: transaction markers and verification between brokers, replicated', async () => {
    const dir = tempDir('ferrolog-inter-broker-ssl-')
    const ca = createCertificateAuthority()
    const cert = ca.issue({ subject: { CN: 'broker' }, keyPassword: 'key-secret' })
    writeFileSync(join(dir, 'ca.pem'), ca.certificatePem)
    writeFileSync(join(dir, 'keystore.pem'), cert.keyPem + cert.chainPem)
    cluster = await EtcdBrokerCluster.start([1, 2, 3], {
      listeners: 'CLIENT://127.0.0.1:0,BROKER://127.0.0.1:0',
      'listener.security.protocol.map': 'CLIENT:SASL_SSL,BROKER:SSL',
      'inter.broker.listener.name': 'BROKER',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': join(dir, 'keystore.pem'),
      'ssl.key.password': 'key-secret',
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': join(dir, 'ca.pem'),
      'listener.name.broker.ssl.client.auth': 'required',
      'ssl.principal.mapping.rules': 'RULE:^CN=(.*)$/$1/,DEFAULT',
      'listener.name.client.sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.client.plain.sasl.jaas.config': `${PLAIN} required user_admin="admin-secret";`,
      'authorizer.class.name': STANDARD_AUTHORIZER_CLASS,
      'super.users': 'User:broker;User:admin',
      'min.insync.replicas': '2',
      'default.replication.factor': '3',
    })
    const b1 = cluster.broker(1)
    const kafka = new Kafka({
      clientId: 'inter-broker-ssl',
      brokers: [`127.0.0.1:${b1.listenerPort('CLIENT')}`],
      ssl: { ca: [ca.certificatePem] },
      sasl: { mechanism: 'plain', username: 'admin', password: 'admin-secret' },
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 },
    })
    const admin = kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic: 'tx', numPartitions: 3, replicationFactor: 3 }] })
    await admin.disconnect()
    const leaderOf = (p: number) => b1.metadataCache.partitionRegistration('tx', p)?.leader ?? -1
    await until('every partition of tx led', () => [0, 1, 2].every((p) => leaderOf(p) >= 0), 20_000)

    const producer = kafka.producer({ transactionalId: 'ssl-tx', idempotent: true, maxInFlightRequests: 1 })
    producers.push(producer)
    await producer.connect()
    const t = await producer.transaction()
    await t.send({ topic: 'tx', acks: -1, messages: [0, 1, 2].map((partition) => ({ partition, value: `v${partition}` })) })
    await t.commit()

    const coordinator = b1.metadataCache.partitionRegistration('__transaction_state', partitionFor('ssl-tx', 50))!.leader
    const remote = [0, 1, 2].filter((p) => leaderOf(p) !== coordinator)
    // Partitions led elsewhere than the coordinator: their markers went by WriteTxnMarkers, their
    // first transactional Produce was verified with the coordinator by AddPartitionsToTxn v4.
    expect(remote.length).toBeGreaterThan(0)
    for (const id of [1, 2, 3]) {
      for (const p of [0, 1, 2]) await until(`tx-${p} with its COMMIT on broker ${id}`, () => logContents(cluster!.broker(id), 'tx', p).join() === `v${p},COMMIT`, 20_000)
    }
  }, 120_000)

  it('SCRAM-SHA-256 from etcd; a broker that is not a super user needs CLUSTER_ACTION to follow', async () => {
    const admin = clientSecurityFrom({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.username': 'admin', 'sasl.password': 'admin-secret' })
    cluster = await EtcdBrokerCluster.start([1, 2], {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
      'security.inter.broker.protocol': 'SASL_PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256',
      'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-256',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': `${PLAIN} required user_admin="admin-secret";`,
      'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config': `${SCRAM} required username="broker" password="broker-secret";`,
      'authorizer.class.name': STANDARD_AUTHORIZER_CLASS,
      'super.users': 'User:admin',
      'default.replication.factor': '2',
      'min.insync.replicas': '1',
    })
    const [b1, b2] = [cluster.broker(1), cluster.broker(2)]
    // The brokers' own credential, kept in etcd, set through the cluster by the admin.
    await withClient(b1.port, admin, async (c) => {
      const m = scramMechanismForName('SCRAM-SHA-256')!
      const salt = randomBytes(16)
      const res = await c.request(-1, alterUserScramCredentialsCodec, {
        deletions: [],
        upsertions: [{ name: 'broker', mechanism: m.type, iterations: 4096, salt, saltedPassword: new ScramFormatter(m).saltedPassword('broker-secret', salt, 4096) }],
      })
      expect(res.results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE])
    })
    await b1.createTopic('follow', 1, {}, false, { replicationFactor: 2 })
    const registration = () => b1.metadataCache.partitionRegistration('follow', 0)
    await until('follow-0 led', () => (registration()?.leader ?? -1) >= 0, 20_000)
    const leader = cluster.broker(registration()!.leader)
    const follower = leader === b1 ? b2 : b1
    await until('the leader holds its log', () => leader.logManager.getLog('follow', 0) !== undefined, 20_000)

    // The follower authenticates (SCRAM) but is refused: the ISR loses it, its log stays empty.
    const appended = await leader.replicaManager.appendRecords({ topic: 'follow', partition: 0 }, buildBatch([{ key: null, value: Buffer.from('one'), headers: [] }]), 1)
    expect(appended.errorCode).toBe(ErrorCode.NONE)
    await until('the ISR shrunk to the leader', () => registration()!.isr.length === 1, 20_000)
    expect(follower.logManager.getLog('follow', 0)?.logEndOffset() ?? 0n).toBe(0n)
    const broker = clientSecurityFrom({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-256', 'sasl.username': 'broker', 'sasl.password': 'broker-secret' })
    const refusedFetch = await withClient(leader.port, broker, (c) => c.request(-1, fetchCodec, followerFetch('follow', [0], follower.config.nodeId), { maxVersion: 12 }))
    expect(refusedFetch.responses[0].partitions[0].errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED)

    // CLUSTER_ACTION granted: the follower catches up and is in the ISR again.
    await withClient(b1.port, admin, async (c) => {
      const res = await c.request(-1, createAclsCodec, {
        creations: [
          {
            resourceType: ResourceType.CLUSTER,
            resourceName: 'kafka-cluster',
            resourcePatternType: PatternType.LITERAL,
            principal: 'User:broker',
            host: '*',
            operation: AclOperation.CLUSTER_ACTION,
            permissionType: AclPermissionType.ALLOW,
          },
        ],
      })
      expect(res.results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE])
    })
    await until('the follower caught up', () => follower.logManager.getLog('follow', 0)?.logEndOffset() === 1n, 20_000)
    await until('the ISR whole again', () => registration()!.isr.length === 2, 20_000)
  }, 120_000)

  it('a follower fetch without CLUSTER_ACTION: TOPIC_AUTHORIZATION_FAILED on each partition, as Apache Kafka 4.4 answers it', async () => {
    fetchKafkaJars()
    const alice = clientSecurityFrom({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.username': 'alice', 'sasl.password': 'alice-secret' })
    const kafkaDir = tempDir('ferrolog-kafka-follower-acl-')
    const ours = await startSaslBroker({
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': `${PLAIN} required user_alice="alice-secret";`,
      'authorizer.class.name': STANDARD_AUTHORIZER_CLASS,
      'super.users': 'User:ANONYMOUS',
    })
    try {
      const kafka = await startSecuredKafka(kafkaDir, { listener: 'SASL_PLAINTEXT', mechanisms: ['PLAIN'], plainUsers: { alice: 'alice-secret' }, superUsers: ['User:admin'] })
      try {
        const answers: Record<string, number[]> = {}
        for (const [name, plaintextPort, saslPort] of [
          ['kafka', kafka.plaintextPort, kafka.securePort],
          ['ferrolog', ours.plaintextPort, ours.port],
        ] as const) {
          await withClient(plaintextPort, clientSecurityFrom({}), async (c) => {
            const created = await c.request(-1, createTopicsCodec, {
              ...defaultCreateTopicsRequest(),
              timeoutMs: 30_000,
              topics: [{ name: 'guarded', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
            })
            expect(created.topics[0].errorCode).toBe(ErrorCode.NONE)
          })
          answers[name] = await withClient(saslPort, alice, async (c) => {
            for (let attempt = 0; ; attempt++) {
              const res = await c.request(-1, fetchCodec, followerFetch('guarded', [0, 1], 2), { maxVersion: 12 })
              const codes = res.responses.flatMap((t) => t.partitions.map((p) => p.errorCode))
              // Kafka: a topic just created has its partitions a moment later.
              if (!codes.includes(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) || attempt === 50) return codes
              await new Promise((r) => setTimeout(r, 100))
            }
          })
        }
        expect(answers.ferrolog).toEqual(answers.kafka)
        expect(answers.ferrolog).toEqual([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED])
      } finally {
        stopKafkaBroker(kafkaDir)
      }
    } finally {
      await ours.stop()
    }
  }, 180_000)

  it('refuses at start what Kafka refuses: a mechanism the listener does not enable, credentials missing', () => {
    const base = {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
      'security.inter.broker.protocol': 'SASL_PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': `${PLAIN} required username="broker" password="broker-secret" user_broker="broker-secret";`,
      'cluster.metadata': 'etcd://127.0.0.1:2379',
    }
    // Kafka's default, GSSAPI, is not enabled here: Kafka's message.
    expect(() => interBrokerClientSecurity(brokerConfigFrom(base))).toThrow(
      new ConfigError('sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when SASL is used for inter-broker communication'),
    )
    const ok = interBrokerClientSecurity(brokerConfigFrom({ ...base, 'sasl.mechanism.inter.broker.protocol': 'PLAIN' }))
    expect(ok).toEqual({ protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN', username: 'broker', password: 'broker-secret' } })
    const noUser = { ...base, 'sasl.mechanism.inter.broker.protocol': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': `${PLAIN} required user_broker="broker-secret";` }
    expect(() => interBrokerClientSecurity(brokerConfigFrom(noUser))).toThrow(
      /listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config: the inter-broker client needs the login module's username and password options/,
    )
    // Never the password in the message.
    try {
      interBrokerClientSecurity(brokerConfigFrom(noUser))
    } catch (err) {
      expect((err as Error).message).not.toContain('broker-secret')
    }
  })
  it('OAUTHBEARER: a token endpoint with the JAAS clientId and clientSecret makes an OAuth login, its URL checked against the allowed URLs', () => {
    const MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
    const url = 'http://127.0.0.1:1/token'
    const base = {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
      'security.inter.broker.protocol': 'SASL_PLAINTEXT',
      'sasl.enabled.mechanisms': 'OAUTHBEARER',
      'sasl.mechanism.inter.broker.protocol': 'OAUTHBEARER',
      'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': `${MODULE} required clientId="broker" clientSecret="broker-secret" scope="kafka";`,
      'listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.token.endpoint.url': url,
      'cluster.metadata': 'etcd://127.0.0.1:2379',
    }
    const security = interBrokerClientSecurity(brokerConfigFrom({ ...base, 'org.apache.kafka.sasl.oauthbearer.allowed.urls': url }))
    expect(security.sasl?.mechanism).toBe('OAUTHBEARER')
    expect(security.sasl?.oauthBearerLogin).toBeDefined()
    closeClientSecurity(security)
    let message = ''
    try {
      interBrokerClientSecurity(brokerConfigFrom(base))
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError)
      message = (err as Error).message
    }
    expect(message).toBe(
      `inter-broker listener SASL_PLAINTEXT: sasl.oauthbearer.token.endpoint.url=${url}: The URL cannot be accessed due to restrictions. Update the config 'org.apache.kafka.sasl.oauthbearer.allowed.urls' to allow the URL to be accessed.`,
    )
    // Neither a token endpoint nor an unsecured subject: Kafka's unsecured login would fail too.
    const neither = { ...base, 'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': `${MODULE} required;` }
    delete (neither as Record<string, string>)['listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.token.endpoint.url']
    expect(() => interBrokerClientSecurity(brokerConfigFrom(neither))).toThrow(/needs clientId and clientSecret with sasl.oauthbearer.token.endpoint.url/)
  })
})
