/**
 * SCRAM credentials in a cluster: kept in etcd (`scram-credentials/<mechanism>/<user>`), so a
 * credential altered through one broker is described and authenticated by every other broker as
 * soon as its watch delivers the change (as Kafka's metadata log gives every broker), a deletion
 * likewise, and a restarted broker has them all though none is in its data dir.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { alterUserScramCredentialsCodec } from '../../ts/protocol/apis/alter-user-scram-credentials.js'
import { describeUserScramCredentialsCodec } from '../../ts/protocol/apis/describe-user-scram-credentials.js'
import { authMessage, ScramFormatter } from '../../ts/security/scram/scram-formatter.js'
import { SCRAM_SHA_256, SCRAM_SHA_512, type ScramMechanism } from '../../ts/security/scram/scram-mechanism.js'
import { ScramSaslServer } from '../../ts/security/scram/scram-sasl-server.js'
import type { Broker } from '../../ts/server/broker.js'
import { SCRAM_CREDENTIALS_FILE } from '../../ts/server/file-scram-credential-store.js'
import { EtcdBrokerCluster } from '../helpers/etcd-cluster.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { setScramCredentials } from '../helpers/scram-credentials.js'

let cluster: EtcdBrokerCluster | undefined
afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

async function authenticates(b: Broker, mechanism: ScramMechanism, user: string, password: string): Promise<boolean> {
  const server = new ScramSaslServer(mechanism, b.scramCredentials.cache)
  const f = new ScramFormatter(mechanism)
  const bare = `n=${user},r=nonce`
  try {
    const first = (await server.evaluateResponse(Buffer.from(`n,,${bare}`))).toString()
    const [, nonce, salt, i] = /^r=([^,]+),s=([^,]+),i=(\d+)$/.exec(first)!
    const proof = f.clientProof(f.saltedPassword(password, Buffer.from(salt, 'base64'), Number(i)), authMessage(bare, first, `c=biws,r=${nonce}`))
    await server.evaluateResponse(Buffer.from(`c=biws,r=${nonce},p=${proof.toString('base64')}`))
    return server.complete
  } catch {
    return false
  }
}

/** Polls `check` (bounded: 10 s) until it holds: the other broker's watch delivers a change a moment after the write. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('not seen within 10 s')
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function describeAll(port: number): Promise<string[]> {
  const wire = new KafkaWire(await connectTo(port), 'scram-describe')
  try {
    const r = await wire.send(describeUserScramCredentialsCodec, 0, { users: null })
    return r.results.map((u) => `${u.user}:${u.credentialInfos.map((c) => `${c.mechanism}/${c.iterations}`).join(',')}`).sort()
  } finally {
    wire.close()
  }
}

describe('SCRAM credentials in a cluster (etcd)', () => {
  it('set through one broker, described and authenticated by the other, deleted likewise, kept over a restart', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2])
    const [b1, b2] = [cluster.broker(1), cluster.broker(2)]
    await setScramCredentials(b1.port, [
      { user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'alice-secret', iterations: 8192 },
      { user: 'bob', mechanism: 'SCRAM-SHA-512', password: 'bob-secret' },
    ])
    // The writer answers once its own cache has the change.
    expect(await describeAll(b1.port)).toEqual(['alice:1/8192', 'bob:2/4096'])
    expect(await authenticates(b1, SCRAM_SHA_256, 'alice', 'alice-secret')).toBe(true)
    await eventually(async () => (await describeAll(b2.port)).join(' ') === 'alice:1/8192 bob:2/4096')
    expect(await authenticates(b2, SCRAM_SHA_256, 'alice', 'alice-secret')).toBe(true)
    expect(await authenticates(b2, SCRAM_SHA_512, 'bob', 'bob-secret')).toBe(true)
    expect(await authenticates(b2, SCRAM_SHA_512, 'bob', 'alice-secret')).toBe(false)

    // A new password through broker 2, a deletion through broker 1.
    await setScramCredentials(b2.port, [{ user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'alice-new' }])
    await eventually(() => authenticates(b1, SCRAM_SHA_256, 'alice', 'alice-new'))
    expect(await authenticates(b1, SCRAM_SHA_256, 'alice', 'alice-secret')).toBe(false)
    const wire = new KafkaWire(await connectTo(b1.port), 'scram-delete')
    const deleted = await wire.send(alterUserScramCredentialsCodec, 0, { deletions: [{ name: 'bob', mechanism: SCRAM_SHA_512.type }], upsertions: [] })
    wire.close()
    expect(deleted.results).toEqual([{ user: 'bob', errorCode: 0, errorMessage: null }])
    await eventually(async () => !(await authenticates(b2, SCRAM_SHA_512, 'bob', 'bob-secret')))

    await cluster.stop(2)
    const again = await cluster.start(2)
    expect(await describeAll(again.port)).toEqual(['alice:1/4096'])
    expect(await authenticates(again, SCRAM_SHA_256, 'alice', 'alice-new')).toBe(true)
    for (const b of [b1, again]) expect(existsSync(join(b.config.dataDir, SCRAM_CREDENTIALS_FILE))).toBe(false)
  }, 120_000)
})
