/**
 * The `group.version` and `share.version` features (KIP-584) against Apache Kafka 4.4, the same
 * steps on both: `kafka-features.sh describe` (group.version the same; share.version ferrolog's
 * 0-1 where Kafka 4.4 has 0-2, its level 2 being the share groups' dead-letter queue that
 * ferrolog does not serve); then both features disabled with `kafka-features.sh disable`:
 * ConsumerGroupHeartbeat, ConsumerGroupDescribe, ShareGroupHeartbeat, ShareGroupDescribe,
 * ShareFetch and ShareAcknowledge answer UNSUPPORTED_VERSION on both, the ApiKeys still listed
 * by ApiVersions; then upgraded again: the heartbeats are served.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { consumerGroupDescribeCodec } from '../../ts/protocol/apis/consumer-group-describe.js'
import { consumerGroupHeartbeatCodec } from '../../ts/protocol/apis/consumer-group-heartbeat.js'
import { shareAcknowledgeCodec } from '../../ts/protocol/apis/share-acknowledge.js'
import { shareFetchCodec } from '../../ts/protocol/apis/share-fetch.js'
import { shareGroupDescribeCodec } from '../../ts/protocol/apis/share-group-describe.js'
import { shareGroupHeartbeatCodec } from '../../ts/protocol/apis/share-group-heartbeat.js'
import { readResponseHeader, writeRequestHeader } from '../../ts/protocol/header.js'
import { defaultConsumerGroupHeartbeatRequest } from '../../ts/protocol/messages/consumer-group-heartbeat-request.js'
import { defaultShareAcknowledgeRequest } from '../../ts/protocol/messages/share-acknowledge-request.js'
import { defaultShareFetchRequest } from '../../ts/protocol/messages/share-fetch-request.js'
import { defaultShareGroupHeartbeatRequest } from '../../ts/protocol/messages/share-group-heartbeat-request.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'

const TARGETS = ['kafka', 'ferrolog'] as const
type Target = (typeof TARGETS)[number]
const ports: Record<Target, number> = { kafka: 0, ferrolog: 0 }
let kafkaDir: string | undefined
let ferrolog: Broker | undefined
let ferrologDir: string | undefined

beforeAll(async () => {
  fetchKafkaJars()
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-group-features-kafka-'))
  ports.kafka = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
  // Its own directory: the helpers' tempDir is removed after each test, before afterAll stops the broker.
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-group-features-'))
  ferrolog = await startBroker({ dataDir: ferrologDir, props: { 'node.id': '1' } })
  ports.ferrolog = ferrolog.port
}, 300_000)

afterAll(async () => {
  try {
    await ferrolog?.stop()
  } finally {
    // Kafka stops even when ferrolog's stop failed.
    if (ferrologDir) rmSync(ferrologDir, { recursive: true, force: true })
    if (kafkaDir) {
      stopKafkaBroker(kafkaDir)
      rmSync(kafkaDir, { recursive: true, force: true })
    }
  }
}, 120_000)

/** FeatureCommand's output (stdout and stderr, trimmed). */
async function features(b: Target, ...args: string[]): Promise<string> {
  const r = await runKafkaClass('org.apache.kafka.tools.FeatureCommand', ['--bootstrap-server', `127.0.0.1:${ports[b]}`, ...args])
  return (r.stdout + r.stderr).trim()
}

/** describe's line of `feature`, spaces squeezed and the epoch left out. */
async function describeLine(b: Target, feature: string): Promise<string> {
  const out = await features(b, 'describe')
  const line = out.split('\n').find((l) => l.startsWith(`Feature: ${feature} `))
  if (!line) throw new Error(`${b}: no ${feature} in:\n${out}`)
  return line.replace(/\s+Epoch: \d+\s*$/, '').replace(/\s+/g, ' ')
}

/** ApiVersions v3 (its response header is v0 whatever the version). */
async function apiVersions(b: Target) {
  const w = new Writer()
  w.int32(0)
  writeRequestHeader(w, { apiKey: apiVersionsCodec.apiKey, apiVersion: 3, correlationId: 1, clientId: 'group-features' }, true)
  apiVersionsCodec.encodeRequest(w, 3, { clientSoftwareName: 'group-features', clientSoftwareVersion: '1' })
  w.patchInt32(0, w.length - 4)
  const socket = await connectTo(ports[b])
  socket.write(w.finish())
  let data = Buffer.alloc(0)
  for await (const chunk of socket) {
    data = Buffer.concat([data, chunk as Buffer])
    if (data.length >= 4 && data.length >= 4 + data.readInt32BE(0)) break
  }
  socket.destroy()
  const r = new Reader(data.subarray(4, 4 + data.readInt32BE(0)))
  readResponseHeader(r, false)
  return apiVersionsCodec.decodeResponse(r, 3)
}

/** Until ApiVersions finalizes the features at `level` (Kafka's broker applies its controller's change a moment later). */
async function finalizedAt(b: Target, level: number): Promise<void> {
  for (let i = 0; ; i++) {
    const finalized = (await apiVersions(b)).finalizedFeatures
    const at = (name: string) => finalized.find((f) => f.name === name)?.maxVersionLevel ?? 0
    if (at('group.version') === level && at('share.version') === level) return
    if (i === 100) throw new Error(`${b}: group.version and share.version not at ${level}: ${JSON.stringify(finalized)}`)
    await sleep(100)
  }
}

/** The same requests as `b` answers them (errors only: both have no such groups). */
async function groupAnswers(b: Target) {
  const w = new KafkaWire(await connectTo(ports[b]), 'group-features')
  try {
    const heartbeat = await w.send(consumerGroupHeartbeatCodec, 0, {
      ...defaultConsumerGroupHeartbeatRequest(),
      groupId: 'gf-consumer',
      memberId: 'gf-member-0000000000001',
      memberEpoch: 0,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['gf-topic'],
      topicPartitions: [],
    })
    const describe = await w.send(consumerGroupDescribeCodec, 0, { groupIds: ['gf-consumer'], includeAuthorizedOperations: false })
    const shareHeartbeat = await w.send(shareGroupHeartbeatCodec, 1, {
      ...defaultShareGroupHeartbeatRequest(),
      groupId: 'gf-share',
      memberId: 'gf-member-0000000000002',
      memberEpoch: 0,
      subscribedTopicNames: ['gf-topic'],
    })
    const shareDescribe = await w.send(shareGroupDescribeCodec, 1, { groupIds: ['gf-share'], includeAuthorizedOperations: false })
    const shareFetch = await w.send(shareFetchCodec, 1, { ...defaultShareFetchRequest(), groupId: 'gf-share', memberId: 'gf-member-0000000000002', shareSessionEpoch: 0, maxWaitMs: 0, topics: [] })
    const shareAck = await w.send(shareAcknowledgeCodec, 1, { ...defaultShareAcknowledgeRequest(), groupId: 'gf-share', memberId: 'gf-member-0000000000002', shareSessionEpoch: 1, topics: [] })
    return {
      heartbeat: [heartbeat.errorCode, heartbeat.errorMessage, heartbeat.memberId],
      describe: describe.groups.map((g) => [g.groupId, g.errorCode, g.errorMessage, g.members.length]),
      shareHeartbeat: [shareHeartbeat.errorCode, shareHeartbeat.errorMessage, shareHeartbeat.memberId],
      shareDescribe: shareDescribe.groups.map((g) => [g.groupId, g.errorCode, g.errorMessage, g.members.length]),
      shareFetch: [shareFetch.errorCode, shareFetch.responses.length],
      shareAck: [shareAck.errorCode, shareAck.responses.length],
    }
  } finally {
    w.close()
  }
}

it('group.version and share.version: described, disabled and upgraded as on Kafka 4.4, the protocols refused at 0', { timeout: 600_000 }, async () => {
  expect(await describeLine('ferrolog', 'group.version')).toBe(await describeLine('kafka', 'group.version'))
  expect(await describeLine('ferrolog', 'group.version')).toBe('Feature: group.version SupportedMinVersion: 0 SupportedMaxVersion: 1 FinalizedVersionLevel: 1')
  expect(await describeLine('kafka', 'share.version')).toBe('Feature: share.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 2')
  expect(await describeLine('ferrolog', 'share.version')).toBe('Feature: share.version SupportedMinVersion: 0 SupportedMaxVersion: 1 FinalizedVersionLevel: 1')

  const disabled: Record<Target, string> = { kafka: '', ferrolog: '' }
  for (const b of TARGETS) {
    disabled[b] = await features(b, 'disable', '--feature', 'group.version', '--feature', 'share.version')
    await finalizedAt(b, 0)
  }
  expect(disabled.ferrolog).toBe(disabled.kafka)
  expect(disabled.kafka).toBe('group.version was disabled.\nshare.version was disabled.')

  const UNSUPPORTED_VERSION = 35
  const refused = { kafka: await groupAnswers('kafka'), ferrolog: await groupAnswers('ferrolog') }
  expect(refused.ferrolog).toEqual(refused.kafka)
  expect(refused.kafka).toEqual({
    heartbeat: [UNSUPPORTED_VERSION, null, null],
    describe: [['gf-consumer', UNSUPPORTED_VERSION, null, 0]],
    shareHeartbeat: [UNSUPPORTED_VERSION, null, null],
    shareDescribe: [['gf-share', UNSUPPORTED_VERSION, null, 0]],
    shareFetch: [UNSUPPORTED_VERSION, 0],
    shareAck: [UNSUPPORTED_VERSION, 0],
  })
  // The ApiKeys stay listed, as Kafka lists them.
  for (const b of TARGETS) {
    const listed = (await apiVersions(b)).apiKeys.map((k) => k.apiKey)
    expect(listed, b).toEqual(expect.arrayContaining([68, 69, 76, 77, 78, 79]))
  }

  for (const b of TARGETS) {
    expect(await features(b, 'upgrade', '--feature', 'group.version=1', '--feature', 'share.version=1')).toBe('group.version was upgraded to 1.\nshare.version was upgraded to 1.')
    await finalizedAt(b, 1)
  }
  // Served again (Kafka may first answer that its coordinator is loading; not UNSUPPORTED_VERSION either way).
  for (const b of TARGETS) {
    const served = await groupAnswers(b)
    expect(served.heartbeat[0], b).not.toBe(UNSUPPORTED_VERSION)
    expect(served.shareHeartbeat[0], b).not.toBe(UNSUPPORTED_VERSION)
  }
  const back = await groupAnswers('ferrolog')
  expect(back.heartbeat[0]).toBe(0)
  expect(back.shareHeartbeat[0]).toBe(0)
})
