/**
 * The broker's etcd client with etcd's own security (ts/cluster/etcd-client.ts,
 * ts/server/etcd-security.ts), against a real etcd started with it (helpers/etcd.ts):
 *
 * - TLS with client certificates (etcd's --cert-file, --trusted-ca-file, --client-cert-auth): a
 *   broker given cluster.metadata.ssl.ca.location, .certificate.location and .key.location joins
 *   and keeps its topics there; one without a client certificate, or without TLS, does not start;
 * - authentication (etcd's `auth enable`, a user whose role may read and write `/ferrolog/` only):
 *   a broker given cluster.metadata.username and .password joins; a wrong password or none, and
 *   it does not start. The password is in no log line.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Etcd3, Range } from 'etcd3'
import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from '../../ts/logger.js'
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { createCertificateAuthority } from '../../ts/security/certificates.js'
import { startEtcd, type EtcdServer } from '../helpers/etcd.js'
import { tempDir } from '../helpers/tmp.js'

let etcd: EtcdServer | undefined
const brokers: Broker[] = []

afterEach(async () => {
  for (const b of brokers.splice(0)) await b.stop().catch(() => undefined)
  await etcd?.close()
  etcd = undefined
})

function brokerProps(server: EtcdServer, nodeId: number, extra: Record<string, string>): Record<string, string> {
  return {
    listeners: '127.0.0.1:0',
    'log.dirs': tempDir(`ferrolog-etcd-security-${nodeId}-`),
    'node.id': String(nodeId),
    'cluster.metadata': server.clusterUrl,
    'broker.session.timeout.ms': '1000',
    ...extra,
  }
}

async function start(props: Record<string, string>, lines: string[] = []): Promise<Broker> {
  const broker = await Broker.start(brokerConfigFrom(props), { logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }) })
  brokers.push(broker)
  return broker
}

/** A start that must fail: it rejects (or, were it to start, the test fails on it). */
async function refused(props: Record<string, string>): Promise<string> {
  try {
    await start(props)
  } catch (err) {
    return (err as Error).message
  }
  throw new Error(`broker ${props['node.id']} started`)
}

describe('etcd TLS and authentication', () => {
  it('TLS with a client certificate: the broker joins; without a certificate or TLS it does not start', async () => {
    const dir = tempDir('ferrolog-etcd-tls-')
    const ca = createCertificateAuthority({ commonName: 'etcd CA' })
    const server = ca.issue({ subject: { CN: 'etcd' }, usage: 'server' })
    const client = ca.issue({ subject: { CN: 'ferrolog' }, usage: 'client' })
    const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
    const caFile = file('ca.pem', ca.certificatePem)
    etcd = await startEtcd({ tls: { certFile: file('server.pem', server.certificatePem), keyFile: file('server-key.pem', server.keyPem), caFile, clientCertAuth: true } })
    const tls = {
      'cluster.metadata.ssl.ca.location': caFile,
      'cluster.metadata.ssl.certificate.location': file('client.pem', client.certificatePem),
      'cluster.metadata.ssl.key.location': file('client-key.pem', client.keyPem),
    }

    const broker = await start(brokerProps(etcd, 1, tls))
    await broker.createTopic('over-tls', 1, {})
    // What etcd holds, read back over TLS: the topic is there.
    const reader = new Etcd3({
      hosts: etcd.endpoint,
      credentials: { rootCertificate: Buffer.from(ca.certificatePem), certChain: Buffer.from(client.certificatePem), privateKey: Buffer.from(client.keyPem) },
    })
    try {
      const keys = await reader.getAll().prefix('/ferrolog/').keys()
      expect(keys.some((k) => k.includes('over-tls'))).toBe(true)
    } finally {
      reader.close()
    }

    // etcd refuses the handshake without a client certificate (TLS alert 42, bad certificate); and a plaintext client gets no connection.
    expect(await refused(brokerProps(etcd, 2, { 'cluster.metadata.ssl.ca.location': caFile }))).toMatch(/bad certificate/)
    expect(await refused(brokerProps(etcd, 3, {}))).toMatch(/UNAVAILABLE/)
    // A certificate without its key is a ConfigError at once.
    expect(await refused(brokerProps(etcd, 4, { 'cluster.metadata.ssl.ca.location': caFile, 'cluster.metadata.ssl.certificate.location': tls['cluster.metadata.ssl.certificate.location'] }))).toBe(
      'cluster.metadata.ssl.certificate.location and cluster.metadata.ssl.key.location go together',
    )
  }, 120_000)

  it('user and password: the broker joins as a user allowed /ferrolog/ only; a wrong password or none, and it does not start', async () => {
    etcd = await startEtcd()
    const root = new Etcd3({ hosts: etcd.endpoint })
    try {
      await root.role('root').create()
      await root.user('root').create('root-password')
      await root.user('root').addRole('root')
      const role = await root.role('ferrolog').create()
      await role.grant({ permission: 'Readwrite', range: Range.prefix('/ferrolog/') })
      await root.user('ferrolog').create('etcd-password')
      await root.user('ferrolog').addRole('ferrolog')
      await root.auth.authEnable()
    } finally {
      root.close()
    }

    const lines: string[] = []
    const broker = await start(brokerProps(etcd, 1, { 'cluster.metadata.username': 'ferrolog', 'cluster.metadata.password': 'etcd-password' }), lines)
    await broker.createTopic('with-auth', 1, {})
    expect(broker.topics.get('with-auth')).toBeDefined()

    expect(await refused(brokerProps(etcd, 2, { 'cluster.metadata.username': 'ferrolog', 'cluster.metadata.password': 'wrong' }))).toMatch(/authentication failed/)
    expect(await refused(brokerProps(etcd, 3, {}))).toMatch(/user name is empty/)
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.filter((l) => l.includes('etcd-password'))).toEqual([])
  }, 120_000)
})
