/**
 * Issue #26's cluster proof, with real processes: a real etcd and three `ferrolog broker --cluster`
 * processes (helpers/cluster-processes.ts) with SASL_SSL on every listener, the inter-broker one
 * included, and Kafka's StandardAuthorizer with no ACL granting anything by default:
 *
 *   CLIENT  SASL_SSL, SCRAM-SHA-512 (users' credentials in etcd, set through the cluster) and PLAIN
 *   BROKER  SASL_SSL, PLAIN, ssl.client.auth=required: the inter-broker listener
 *           (inter.broker.listener.name=BROKER, sasl.mechanism.inter.broker.protocol=PLAIN);
 *           the brokers authenticate as User:broker, a super user, with the username and password
 *           of the listener's PlainLoginModule, and present their key store as client certificate.
 *
 * A topic with RF=3 and min.insync.replicas=2 under Kafka's Java producer (idempotent, acks=all,
 * SASL_SSL with SCRAM-SHA-512 as a user with WRITE on the topic and IDEMPOTENT_WRITE): the leader of
 * a partition is SIGKILLed mid-stream, SASL_SSL_CLUSTER_ROUNDS times (default 2), each time restarted
 * and waited for until the ISR is whole again. An acks=all write can only be acknowledged once a
 * follower fetched it, so the acknowledgements themselves show the followers replicating over
 * SASL_SSL. Then the topic is read back with Kafka's consumer: every acknowledged record at its
 * offset, no value twice.
 *
 * And the doors: a client without credentials gets nothing (no TLS: no answer; TLS without SASL:
 * closed at its first request; a wrong password: SASL_AUTHENTICATION_FAILED); a user with
 * credentials and no ACL is refused with Kafka's error codes (Metadata hides the topic,
 * TOPIC_AUTHORIZATION_FAILED for produce, fetch and a follower fetch without CLUSTER_ACTION,
 * CLUSTER_AUTHORIZATION_FAILED for an idempotent producer id and WriteTxnMarkers); a client
 * without a certificate cannot reach the inter-broker listener.
 *
 * Needs dist/, etcd, Java and tools/kafka's jars. A failed test keeps its cluster directory.
 */
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { clientSecurityFrom, type ClientSecurity } from '../../ts/client/client-security.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { alterUserScramCredentialsCodec } from '../../ts/protocol/apis/alter-user-scram-credentials.js'
import { createAclsCodec } from '../../ts/protocol/apis/create-acls.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { initProducerIdCodec } from '../../ts/protocol/apis/init-producer-id.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { writeTxnMarkersCodec } from '../../ts/protocol/apis/write-txn-markers.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { defaultFetchRequest } from '../../ts/protocol/messages/fetch-request.js'
import { defaultMetadataRequest } from '../../ts/protocol/messages/metadata-request.js'
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../ts/security/authorizer/acl.js'
import { STANDARD_AUTHORIZER_CLASS } from '../../ts/security/authorizer/standard-authorizer.js'
import { createCertificateAuthority } from '../../ts/security/certificates.js'
import { ScramFormatter } from '../../ts/security/scram/scram-formatter.js'
import { scramMechanismForName } from '../../ts/security/scram/scram-mechanism.js'
import { ClusterProcesses } from '../helpers/cluster-processes.js'
import { CheckedProducer, compileChecker, verifyTopic } from '../helpers/replication-checker.js'
import { tempDir } from '../helpers/tmp.js'

const ROUNDS = Number(process.env.SASL_SSL_CLUSTER_ROUNDS ?? 2)
const TOPIC = 'secured'
const ZERO_UUID = Buffer.alloc(16)
const PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule'

const PASSWORDS = { broker: 'broker-secret', admin: 'admin-secret', nobody: 'nobody-secret', writer: 'writer-secret' }

let cluster: ClusterProcesses | undefined
let failed = false

beforeAll(() => compileChecker(), 300_000)

afterEach(async (ctx) => {
  const keep = failed || ctx.task.result?.state === 'fail'
  if (cluster && keep) console.log(`sasl-ssl-cluster: kept ${cluster.root} (broker-<id>.log, data-<id>/, *.acks)`)
  await cluster?.close(keep)
  cluster = undefined
})

interface Pki {
  caFile: string
  keystoreFile: string
}

/** A CA, one broker certificate (SANs localhost and 127.0.0.1) in a PEM key store: what every broker presents, to clients and to each other. */
function makePki(dir: string): Pki {
  const ca = createCertificateAuthority({ commonName: 'ferrolog cluster CA' })
  const broker = ca.issue({ subject: { CN: 'broker', O: 'ferrolog' } })
  const caFile = join(dir, 'ca.pem')
  const keystoreFile = join(dir, 'broker-keystore.pem')
  writeFileSync(caFile, ca.certificatePem)
  writeFileSync(keystoreFile, broker.keyPem + broker.chainPem)
  return { caFile, keystoreFile }
}

function brokerProps(pki: Pki): Record<string, string> {
  return {
    'listener.security.protocol.map': 'CLIENT:SASL_SSL,BROKER:SASL_SSL',
    'inter.broker.listener.name': 'BROKER',
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': pki.keystoreFile,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': pki.caFile,
    'listener.name.broker.ssl.client.auth': 'required',
    'listener.name.broker.sasl.enabled.mechanisms': 'PLAIN',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.broker.plain.sasl.jaas.config': `${PLAIN} required username="broker" password="${PASSWORDS.broker}" user_broker="${PASSWORDS.broker}";`,
    'listener.name.client.sasl.enabled.mechanisms': 'SCRAM-SHA-512,PLAIN',
    'listener.name.client.plain.sasl.jaas.config': `${PLAIN} required user_admin="${PASSWORDS.admin}" user_nobody="${PASSWORDS.nobody}";`,
    'authorizer.class.name': STANDARD_AUTHORIZER_CLASS,
    'super.users': 'User:broker;User:admin',
    'allow.everyone.if.no.acl.found': 'false',
    'transaction.state.log.replication.factor': '3',
  }
}

/** A client of the CLIENT listener: SASL_SSL with `mechanism`, trusting the cluster's CA. */
function security(pki: Pki, mechanism: 'PLAIN' | 'SCRAM-SHA-512', username: string, password: string): ClientSecurity {
  return clientSecurityFrom({ 'security.protocol': 'SASL_SSL', 'ssl.ca.location': pki.caFile, 'sasl.mechanism': mechanism, 'sasl.username': username, 'sasl.password': password })
}

async function withClient<T>(address: string, sec: ClientSecurity, f: (c: NetworkClient) => Promise<T>): Promise<T> {
  const client = new NetworkClient({ bootstrapServers: address, security: sec, requestTimeoutMs: 10_000, connectTimeoutMs: 5000, clientId: 'sasl-ssl-test' })
  try {
    return await f(client)
  } finally {
    await client.close()
  }
}

/** The writer's SCRAM-SHA-512 credential (kept in etcd) and ACLs, set by the admin through the cluster. */
async function setUpWriter(address: string, admin: ClientSecurity): Promise<void> {
  await withClient(address, admin, async (c) => {
    const m = scramMechanismForName('SCRAM-SHA-512')!
    const salt = randomBytes(32)
    const altered = await c.request(-1, alterUserScramCredentialsCodec, {
      deletions: [],
      upsertions: [{ name: 'writer', mechanism: m.type, iterations: 4096, salt, saltedPassword: new ScramFormatter(m).saltedPassword(PASSWORDS.writer, salt, 4096) }],
    })
    expect(altered.results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE])
    const allow = (resourceType: number, resourceName: string, operation: number) => ({
      resourceType,
      resourceName,
      resourcePatternType: PatternType.LITERAL,
      principal: 'User:writer',
      host: '*',
      operation,
      permissionType: AclPermissionType.ALLOW,
    })
    const created = await c.request(-1, createAclsCodec, {
      creations: [allow(ResourceType.TOPIC, TOPIC, AclOperation.WRITE), allow(ResourceType.CLUSTER, 'kafka-cluster', AclOperation.IDEMPOTENT_WRITE)],
    })
    expect(created.results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE])
  })
}

/** Kafka's client.properties for the Java clients of the CLIENT listener. */
function clientProperties(file: string, pki: Pki, mechanism: string, module: string, user: string, password: string): string {
  writeFileSync(
    file,
    [
      'security.protocol=SASL_SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${pki.caFile}`,
      `sasl.mechanism=${mechanism}`,
      `sasl.jaas.config=${module} required username="${user}" password="${password}";`,
    ].join('\n') + '\n',
  )
  return file
}

function leaderOf(view: { partitions: Array<{ partition: number; leaderId: number }> }, partition: number): number {
  return view.partitions.find((p) => p.partition === partition)!.leaderId
}

describe('a SASL_SSL cluster (real processes)', () => {
  it('brokers replicate over SASL_SSL as a super user; the leader SIGKILLed under an acks=all idempotent producer loses nothing; no credentials, no access', async () => {
    const dir = tempDir('ferrolog-sasl-ssl-cluster-')
    const pki = makePki(dir)
    const admin = security(pki, 'PLAIN', 'admin', PASSWORDS.admin)
    const c = (cluster = await ClusterProcesses.start({
      brokers: 3,
      listeners: ['CLIENT', 'BROKER'],
      props: brokerProps(pki),
      clientSecurity: admin,
      env: process.env.FERROLOG_LOG_LEVEL ? { FERROLOG_LOG_LEVEL: process.env.FERROLOG_LOG_LEVEL } : {},
    }))
    await c.createTopic(TOPIC, { partitions: 3, replicationFactor: 3 })
    await c.waitForFullIsr(TOPIC)
    await setUpWriter(c.nodes[0].address, admin)

    const writerProps = clientProperties(join(dir, 'writer.properties'), pki, 'SCRAM-SHA-512', 'org.apache.kafka.common.security.scram.ScramLoginModule', 'writer', PASSWORDS.writer)
    const adminProps = clientProperties(join(dir, 'admin.properties'), pki, 'PLAIN', PLAIN, 'admin', PASSWORDS.admin)
    const acks = join(c.root, 'secured.acks')
    /** Per round: the SIGKILL to the partition's first acknowledgement after it (ms). */
    const stalls: number[] = []
    const producer = new CheckedProducer(c.bootstrap, TOPIC, acks, { partitions: 3, rate: 150, commandConfig: writerProps })
    try {
      await producer.waitForAcks(150, 60_000)
      for (let round = 0; round < ROUNDS; round++) {
        const partition = round % 3
        const before = await c.waitForFullIsr(TOPIC)
        const victim = c.node(leaderOf(before, partition))
        await producer.waitForAcks(50, 30_000)
        const killedAt = Date.now()
        await victim.kill()
        // Another leader, from the ISR, and acknowledgements on the partition again.
        await c.until(`a new leader of ${TOPIC}-${partition} after broker ${victim.nodeId} was killed`, async () => {
          const view = await c.topic(TOPIC)
          const leader = view ? leaderOf(view, partition) : -1
          return leader >= 0 && leader !== victim.nodeId
        })
        await c.until(`acknowledgements of ${TOPIC}-${partition} after the kill`, async () => producer.firstAckAfter(partition, killedAt) !== undefined, 60_000)
        stalls.push(producer.firstAckAfter(partition, killedAt)! - killedAt)
        await victim.start()
        await c.waitForFullIsr(TOPIC, 90_000)
        await producer.waitForAcks(50, 30_000)
      }
      await producer.stop(150_000)
    } catch (err) {
      failed = true
      producer.kill()
      throw new Error(`${(err as Error).message}\n${c.logTails(4000)}`)
    }
    expect(producer.errors).toEqual([])
    expect(c.unexpectedExits()).toEqual([])

    const report = await verifyTopic(c.bootstrap, TOPIC, [acks], [], { commandConfig: adminProps })
    if (report.lostCount + report.duplicateCount + report.offsetsReused > 0) failed = true
    expect({ lost: report.lost.slice(0, 5), duplicates: report.duplicates.slice(0, 5), reused: report.reused.slice(0, 5) }).toEqual({ lost: [], duplicates: [], reused: [] })
    expect(report.acked).toBe(producer.acked)
    expect(report.records).toBeGreaterThanOrEqual(report.acked)
    console.log(
      `sasl-ssl-cluster: ${ROUNDS} leader kills, ${report.acked} acknowledged, ${report.records} records read back, none lost; kill to the partition's next acknowledgement: ${stalls.join(', ')} ms`,
    )

    // --- No credentials: nothing at all.
    const client = c.nodes[0]
    const tlsOnly = clientSecurityFrom({ 'security.protocol': 'SSL', 'ssl.ca.location': pki.caFile })
    const plaintext = clientSecurityFrom({ 'security.protocol': 'PLAINTEXT' })
    for (const sec of [plaintext, tlsOnly, security(pki, 'PLAIN', 'admin', 'wrong'), security(pki, 'SCRAM-SHA-512', 'writer', 'wrong')]) {
      await expect(withClient(client.address, { ...sec }, (x) => x.request(-1, metadataCodec, { ...defaultMetadataRequest(), topics: null }))).rejects.toThrow()
    }
    await expect(withClient(client.address, security(pki, 'PLAIN', 'admin', 'wrong'), (x) => x.request(-1, metadataCodec, { ...defaultMetadataRequest(), topics: null }))).rejects.toMatchObject({
      code: 'SASL_AUTHENTICATION_FAILED',
    })
    // The inter-broker listener wants a client certificate: a client without one is refused before SASL.
    const brokerPort = client.listenerPorts.get('BROKER')!
    await expect(
      withClient(
        `127.0.0.1:${brokerPort}`,
        clientSecurityFrom({ 'security.protocol': 'SASL_SSL', 'ssl.ca.location': pki.caFile, 'sasl.mechanism': 'PLAIN', 'sasl.username': 'broker', 'sasl.password': PASSWORDS.broker }),
        (x) => x.request(-1, metadataCodec, { ...defaultMetadataRequest(), topics: null }),
      ),
    ).rejects.toThrow()

    // --- Credentials without ACLs: refused with Kafka's errors.
    await withClient(client.address, security(pki, 'PLAIN', 'nobody', PASSWORDS.nobody), async (x) => {
      const all = await x.request(-1, metadataCodec, { ...defaultMetadataRequest(), topics: null, allowAutoTopicCreation: false })
      expect(all.topics.map((t) => t.name)).toEqual([])
      const named = await x.request(-1, metadataCodec, { ...defaultMetadataRequest(), topics: [{ name: TOPIC, topicId: ZERO_UUID }], allowAutoTopicCreation: false })
      expect(named.topics.map((t) => [t.name, t.errorCode])).toEqual([[TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED]])
      const produced = await x.request(-1, produceCodec, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 10_000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ key: null, value: Buffer.from('x'), headers: [] }]) }] }],
      })
      expect(produced.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
      const fetchAs = (replicaId: number) =>
        x
          .request(
            -1,
            fetchCodec,
            {
              ...defaultFetchRequest(),
              replicaId,
              maxWaitMs: 0,
              minBytes: 0,
              maxBytes: 1 << 20,
              topics: [
                {
                  topic: TOPIC,
                  topicId: ZERO_UUID,
                  partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20, replicaDirectoryId: ZERO_UUID }],
                },
              ],
            },
            { maxVersion: 12 },
          )
          .then((r) => r.responses[0].partitions[0].errorCode)
      // A consumer fetch without READ, and a follower fetch without CLUSTER_ACTION: both TOPIC_AUTHORIZATION_FAILED, as in Kafka.
      expect(await fetchAs(-1)).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
      expect(await fetchAs(2)).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
      const pid = await x.request(-1, initProducerIdCodec, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false })
      expect(pid.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
      const markers = await x.request(-1, writeTxnMarkersCodec, {
        markers: [{ producerId: 1n, producerEpoch: 0, transactionResult: false, topics: [{ name: TOPIC, partitionIndexes: [0] }], coordinatorEpoch: 0, transactionVersion: 0 }],
      })
      expect(markers.markers[0].topics[0].partitions[0].errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    })
  }, 600_000)
})
