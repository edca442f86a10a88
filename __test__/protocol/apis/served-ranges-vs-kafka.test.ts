/**
 * The version ranges the last four codecs moved to the generated ones serve, against what a real
 * Kafka 4.4 broker advertises (its ApiVersions v3 answer, captured in
 * __test__/fixtures/protocol/control-path by tools/kafka/capture-protocol.sh): ferrolog serves no
 * version Kafka 4.4 dropped (ListOffsets v0, KIP-896) nor one it does not know.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { addPartitionsToTxnCodec } from '../../../ts/protocol/apis/add-partitions-to-txn.js'
import { apiVersionsCodec } from '../../../ts/protocol/apis/api-versions.js'
import { listOffsetsCodec } from '../../../ts/protocol/apis/list-offsets.js'
import { metadataCodec } from '../../../ts/protocol/apis/metadata.js'
import { readResponseHeader } from '../../../ts/protocol/header.js'
import { Reader } from '../../../ts/protocol/reader.js'

const kafka = (() => {
  const r = new Reader(readFileSync(join(__dirname, '../../fixtures/protocol/control-path/api-versions-v3-response.kafka.bin')))
  readResponseHeader(r, false)
  return apiVersionsCodec.decodeResponse(r, 3).apiKeys
})()

describe('served ranges against Kafka 4.4', () => {
  it.each([listOffsetsCodec, metadataCodec, apiVersionsCodec, addPartitionsToTxnCodec])('$name: within what Kafka 4.4 serves, from its lowest version', (codec) => {
    const theirs = kafka.find((k) => k.apiKey === codec.apiKey)
    expect(theirs, `Kafka 4.4 serves ${codec.name}`).toBeDefined()
    expect(codec.minVersion).toBe(theirs!.minVersion)
    expect(codec.maxVersion).toBeLessThanOrEqual(theirs!.maxVersion)
  })
})
