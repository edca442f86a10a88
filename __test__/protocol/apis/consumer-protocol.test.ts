/**
 * The consumer protocol's embedded bytes (ts/protocol/consumer-protocol.ts): here with the group
 * codecs that carry them, so that `vitest run __test__/protocol/apis` covers them too.
 */
import { describe, expect, it } from 'vitest'
import { CONSUMER_PROTOCOL_MAX_VERSION, decodeAssignment, decodeSubscription, decodeSubscriptionTopics, encodeAssignment, encodeSubscription } from '../../../ts/protocol/consumer-protocol.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { rng } from '../helpers.js'
import { hex, KAFKA_CONSUMER_PROTOCOL as KAFKA, throwsOnlyProtocolError } from './group-codec-suite.js'
import { assignmentSample, subscriptionExpected, subscriptionSample } from './group-samples.js'

const VERSIONS = [0, 1, 2, 3]

describe('consumer protocol', () => {
  it('knows versions 0-3, as Kafka 4.x does', () => {
    expect(Object.keys(KAFKA.ConsumerProtocolSubscription).map(Number)).toEqual(VERSIONS)
    expect(Object.keys(KAFKA.ConsumerProtocolAssignment).map(Number)).toEqual(VERSIONS)
    expect(CONSUMER_PROTOCOL_MAX_VERSION).toBe(3)
  })

  for (const v of VERSIONS) {
    it(`subscription v${v}: round trip and Kafka's bytes`, () => {
      const kafka = KAFKA.ConsumerProtocolSubscription[v]
      const bytes = encodeSubscription(subscriptionSample, v)
      expect(bytes.toString('hex')).toBe(kafka)
      expect(decodeSubscription(Buffer.from(kafka, 'hex'))).toStrictEqual({ version: v, value: subscriptionExpected(v) })
    })

    it(`assignment v${v}: round trip and Kafka's bytes`, () => {
      const kafka = KAFKA.ConsumerProtocolAssignment[v]
      expect(encodeAssignment(assignmentSample, v).toString('hex')).toBe(kafka)
      expect(decodeAssignment(Buffer.from(kafka, 'hex'))).toStrictEqual({ version: v, value: assignmentSample })
    })
  }

  it('golden subscription v0 and v3', () => {
    const v0 = hex(`
      0000            // version 0
      00000001        // topics: 1
      0001 74         //   "t"
      ffffffff        // userData: null
    `)
    const value0 = { topics: ['t'], userData: null, ownedPartitions: [], generationId: -1, rackId: null }
    expect(encodeSubscription(value0, 0).toString('hex')).toBe(v0.toString('hex'))
    expect(decodeSubscription(v0)).toStrictEqual({ version: 0, value: value0 })

    const v3 = hex(`
      0003            // version 3
      00000001        // topics: 1
      0001 74         //   "t"
      00000001 ab     // userData
      00000001        // ownedPartitions: 1
      0001 74         //   topic "t"
      00000001        //   partitions: 1
      00000000        //     0
      00000005        // generationId 5
      ffff            // rackId: null
    `)
    const value3 = {
      topics: ['t'],
      userData: Buffer.from([0xab]),
      ownedPartitions: [{ topic: 't', partitions: [0] }],
      generationId: 5,
      rackId: null,
    }
    expect(encodeSubscription(value3, 3).toString('hex')).toBe(v3.toString('hex'))
    expect(decodeSubscription(v3)).toStrictEqual({ version: 3, value: value3 })
  })

  it('golden assignment v1', () => {
    const bytes = hex(`
      0001            // version 1
      00000001        // assignedPartitions: 1
      0001 74         //   topic "t"
      00000002        //   partitions: 2
      00000000        //     0
      00000001        //     1
      ffffffff        // userData: null
    `)
    const value = { assignedPartitions: [{ topic: 't', partitions: [0, 1] }], userData: null }
    expect(encodeAssignment(value, 1).toString('hex')).toBe(bytes.toString('hex'))
    expect(decodeAssignment(bytes)).toStrictEqual({ version: 1, value })
  })

  it('reads a newer version with the fields it knows, as Kafka does', () => {
    const v3 = encodeSubscription(subscriptionSample, 3)
    const v9 = Buffer.concat([Buffer.from([0x00, 0x09]), v3.subarray(2), Buffer.from('0102030405', 'hex')])
    expect(decodeSubscription(v9)).toStrictEqual({ version: 9, value: subscriptionExpected(3) })
    const assignment = encodeAssignment(assignmentSample, 3)
    const a4 = Buffer.concat([Buffer.from([0x00, 0x04]), assignment.subarray(2), Buffer.from([0xff])])
    expect(decodeAssignment(a4)).toStrictEqual({ version: 4, value: assignmentSample })
  })

  it("the coordinator's topics-only read: every version's v0 prefix, what follows unread", () => {
    for (const v of VERSIONS) expect(decodeSubscriptionTopics(Buffer.from(KAFKA.ConsumerProtocolSubscription[v], 'hex'))).toEqual(['orders', 'payments'])
    // A v1 subscription whose ownedPartitions are cut short still names its topics.
    const v1 = encodeSubscription(subscriptionSample, 1)
    expect(decodeSubscriptionTopics(v1.subarray(0, v1.length - 3))).toEqual(['orders', 'payments'])
    expect(() => decodeSubscriptionTopics(hex('ffff 00000000 ffffffff'))).toThrow(ProtocolError)
    expect(() => decodeSubscriptionTopics(Buffer.from('subscription'))).toThrow(ProtocolError)
  })

  it('refuses a negative version, and cannot write an unknown one', () => {
    expect(() => decodeSubscription(hex('ffff 00000000 ffffffff'))).toThrow(ProtocolError)
    expect(() => decodeAssignment(hex('8000 00000000 ffffffff'))).toThrow(ProtocolError)
    expect(() => encodeSubscription(subscriptionSample, 4)).toThrow(/version 4/)
    expect(() => encodeAssignment(assignmentSample, -1)).toThrow(/version -1/)
  })

  it('truncated or damaged bytes throw ProtocolError only', () => {
    const next = rng(2024)
    const pick = (n: number) => Math.floor(next() * n)
    for (const v of VERSIONS) {
      for (const [what, valid, dec] of [
        ['subscription', encodeSubscription(subscriptionSample, v), decodeSubscription],
        ['assignment', encodeAssignment(assignmentSample, v), decodeAssignment],
      ] as const) {
        for (let n = 0; n < valid.length; n++) {
          const cut = `${what} v${v} cut to ${n}`
          expect(
            throwsOnlyProtocolError(() => dec(valid.subarray(0, n)), cut),
            cut,
          ).toBe(true)
        }
        for (let i = 0; i < 300; i++) {
          const buf = Buffer.from(valid)
          for (let k = 1 + pick(3); k > 0; k--) buf[pick(buf.length)] = pick(2) ? pick(256) : 0xff
          throwsOnlyProtocolError(() => dec(buf), `${what} v${v} damage ${buf.toString('hex')}`)
        }
      }
    }
  })
})
