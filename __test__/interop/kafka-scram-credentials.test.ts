/**
 * Users' SCRAM credentials managed with Apache Kafka's own kafka-configs (ConfigCommand:
 * AlterUserScramCredentials, DescribeClientQuotas + DescribeUserScramCredentials), the same
 * commands against ferrolog and against Apache Kafka 4.4, same output: credentials added with
 * given and default iterations, described one user and all users, a mechanism deleted, refusals
 * (too many iterations, deleting a credential that does not exist, an unknown user described).
 * Then ferrolog's credentials survive a restart, hold no password, and authenticate the password
 * they were made from (and only it) through ScramSaslServer.
 */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { SaslAuthenticationError } from '../../ts/security/sasl-server.js'
import type { CredentialCache } from '../../ts/security/scram/credential-cache.js'
import { authMessage, ScramFormatter } from '../../ts/security/scram/scram-formatter.js'
import { SCRAM_SHA_256, SCRAM_SHA_512, type ScramMechanism } from '../../ts/security/scram/scram-mechanism.js'
import { ScramSaslServer } from '../../ts/security/scram/scram-sasl-server.js'
import type { Broker } from '../../ts/server/broker.js'
import { SCRAM_CREDENTIALS_FILE } from '../../ts/server/file-scram-credential-store.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, runKafkaBroker, runKafkaTool, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
let kafkaDir: string | undefined
beforeAll(() => fetchKafkaJars(), 300_000)
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

/**
 * kafka-configs' answer, the same for either broker: its lines (sorted, and each user's
 * mechanisms sorted: Kafka lists them in the order of a HashMap keyed by an enum, which is not
 * fixed), or the exception it ended with.
 */
async function configs(port: number, args: string[]): Promise<string> {
  const r = await runKafkaTool(port, KafkaTool.CONFIGS, args)
  const failure = /Caused by: (\S+Exception: .*)|ExecutionException: (\S+Exception: .*)/.exec(r.stdout + r.stderr)
  if (r.status !== 0) return `exit ${r.status}: ${failure ? (failure[1] ?? failure[2]) : r.stdout + r.stderr}`
  const line = (l: string) => l.replace(/( are )(.*)$/, (_, are: string, list: string) => are + list.split(', ').sort().join(', '))
  return r.stdout.trim().split('\n').map(line).sort().join('\n')
}

const SCENARIO: string[][] = [
  ['--alter', '--entity-type', 'users', '--entity-name', 'alice', '--add-config', 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]'],
  ['--alter', '--entity-type', 'users', '--entity-name', 'alice', '--add-config', 'SCRAM-SHA-512=[password=alice-512]'],
  ['--alter', '--entity-type', 'users', '--entity-name', 'bob', '--add-config', 'SCRAM-SHA-512=[iterations=16384,password=bob-secret]'],
  ['--describe', '--entity-type', 'users', '--entity-name', 'alice'],
  ['--describe', '--entity-type', 'users'],
  ['--alter', '--entity-type', 'users', '--entity-name', 'carol', '--add-config', 'SCRAM-SHA-256=[iterations=16385,password=x]'],
  ['--describe', '--entity-type', 'users', '--entity-name', 'carol'],
  ['--alter', '--entity-type', 'users', '--entity-name', 'bob', '--delete-config', 'SCRAM-SHA-256'],
  ['--alter', '--entity-type', 'users', '--entity-name', 'bob', '--delete-config', 'SCRAM-SHA-512'],
  ['--describe', '--entity-type', 'users', '--entity-name', 'bob'],
  ['--alter', '--entity-type', 'users', '--entity-name', 'alice', '--add-config', 'SCRAM-SHA-256=[iterations=4096,password=alice-new]'],
  // Both mechanisms in one command: one request naming the user twice, refused whole.
  ['--alter', '--entity-type', 'users', '--entity-name', 'dora', '--add-config', 'SCRAM-SHA-256=[password=dora],SCRAM-SHA-512=[password=dora]'],
  ['--describe', '--entity-type', 'users'],
]

/** One SCRAM exchange against the broker's credentials, as a client with `password` would run it. */
async function authenticates(cache: CredentialCache, mechanism: ScramMechanism, user: string, password: string): Promise<boolean> {
  const server = new ScramSaslServer(mechanism, cache)
  const f = new ScramFormatter(mechanism)
  const bare = `n=${user},r=client-nonce`
  try {
    const first = (await server.evaluateResponse(Buffer.from(`n,,${bare}`))).toString()
    const [, nonce, salt, iterations] = /^r=([^,]+),s=([^,]+),i=(\d+)$/.exec(first)!
    const withoutProof = `c=biws,r=${nonce}`
    const proof = f.clientProof(f.saltedPassword(password, Buffer.from(salt, 'base64'), Number(iterations)), authMessage(bare, first, withoutProof))
    await server.evaluateResponse(Buffer.from(`${withoutProof},p=${proof.toString('base64')}`))
    return server.complete
  } catch (err) {
    if (err instanceof SaslAuthenticationError) return false
    throw err
  }
}

describe("kafka-configs' SCRAM credentials", () => {
  it('answer the same on ferrolog and on Apache Kafka 4.4, survive a restart and authenticate their passwords', async () => {
    const dataDir = tempDir('ferrolog-scram-')
    broker = await startBroker({ dataDir })
    kafkaDir = tempDir('kafka-scram-')
    const kafkaPort = kafkaBrokerPort(await runKafkaBroker(kafkaDir))

    const ours: string[] = []
    const theirs: string[] = []
    for (const args of SCENARIO) {
      const [a, b] = await Promise.all([configs(broker.port, args), configs(kafkaPort, args)])
      ours.push(a)
      theirs.push(b)
    }
    expect(ours).toEqual(theirs)
    expect(ours[0]).toBe('Completed updating config for user alice.')
    expect(ours[3]).toBe("SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096")
    expect(ours[5]).toBe('exit 1: org.apache.kafka.common.errors.UnacceptableCredentialException: Too many iterations')
    // Kafka's tool prints nothing for a user without credentials (its users() future fails first).
    expect(ours[6]).toBe('')
    expect(ours[7]).toBe('exit 1: org.apache.kafka.common.errors.ResourceNotFoundException: Attempt to delete a user credential that does not exist')
    expect(ours[11]).toBe('exit 1: org.apache.kafka.common.errors.DuplicateResourceException: A user credential cannot be altered twice in the same request')
    expect(ours[12]).toBe("SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=4096")

    // Durable, without a password, and only the broker's to read.
    await broker.stop()
    broker = await startBroker({ dataDir })
    expect(await configs(broker.port, ['--describe', '--entity-type', 'users'])).toBe(ours[12])
    const file = join(dataDir, SCRAM_CREDENTIALS_FILE)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const stored = readFileSync(file, 'utf8')
    for (const secret of ['alice-secret', 'alice-new', 'alice-512', 'bob-secret']) {
      expect(stored).not.toContain(secret)
      expect(stored).not.toContain(Buffer.from(secret).toString('base64'))
    }
    const cache = broker.scramCredentials.cache
    expect(await authenticates(cache, SCRAM_SHA_256, 'alice', 'alice-new')).toBe(true)
    expect(await authenticates(cache, SCRAM_SHA_256, 'alice', 'alice-secret')).toBe(false)
    expect(await authenticates(cache, SCRAM_SHA_512, 'alice', 'alice-512')).toBe(true)
    expect(await authenticates(cache, SCRAM_SHA_512, 'bob', 'bob-secret')).toBe(false)
  }, 300_000)
})
