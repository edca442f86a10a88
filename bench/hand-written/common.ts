// The hand-written codec ferrolog served before issue 25 switched it to the generated one
// (ts/protocol/apis, ts/protocol/messages): kept here only as the baseline of
// bench/protocol-codecs.bench.ts. Nothing in ts/ imports it.
/**
 * What several API codecs share beyond the Reader/Writer primitives: the version guard, the
 * refusal to encode a field a version cannot carry, and the structures that more than one ApiKey
 * puts on the wire (LeaderIdAndEpoch and NodeEndpoint, in Fetch and Produce responses v12+/v10+).
 *
 * The classic-or-compact choice itself lives on Reader and Writer (`flexString`, `flexArray`,
 * `endStruct`, ...), so a codec reads as one chain of calls on its reader or writer.
 */
import { ProtocolError } from '../../ts/protocol/protocol-error.js'
import type { Reader } from '../../ts/protocol/reader.js'
import type { Writer } from '../../ts/protocol/writer.js'

/** The all-zero uuid: Kafka's default and "no topic id". Shared; never write into it. */
export const ZERO_UUID: Buffer = Buffer.alloc(16)

/** Refuses a version outside the served range, on either side. */
export function checkVersion(api: string, version: number, min: number, max: number): void {
  if (!(Number.isInteger(version) && version >= min && version <= max)) {
    throw new ProtocolError(`${api} v${version} is not one of v${min}-v${max}`)
  }
}

/**
 * Kafka's UnsupportedVersionException: encoding a version that lacks a non-ignorable field whose
 * value is not the default. `what` names the field or the case ("a null topics array").
 */
export function cannotCarry(api: string, version: number, what: string): never {
  throw new Error(`${api} v${version} cannot carry ${what}`)
}

// LeaderIdAndEpoch and NodeEndpoint only exist as tagged fields, so always in flexible form.

/** The CurrentLeader of Fetch responses v12+ and Produce responses v10+. */
export interface LeaderIdAndEpoch {
  leaderId: number
  leaderEpoch: number
}

/** The NodeEndpoints of Fetch responses v16+ and Produce responses v10+. */
export interface NodeEndpoint {
  nodeId: number
  host: string
  port: number
  rack: string | null
}

export function readLeaderIdAndEpoch(r: Reader): LeaderIdAndEpoch {
  const leaderId = r.int32()
  const leaderEpoch = r.int32()
  r.skipTaggedFields()
  return { leaderId, leaderEpoch }
}

export function writeLeaderIdAndEpoch(w: Writer, v: LeaderIdAndEpoch): void {
  w.int32(v.leaderId).int32(v.leaderEpoch).endStruct(true)
}

export function readNodeEndpoints(r: Reader): NodeEndpoint[] {
  return r.compactArray((r) => {
    const endpoint = { nodeId: r.int32(), host: r.compactString(), port: r.int32(), rack: r.compactNullableString() }
    r.skipTaggedFields()
    return endpoint
  })
}

export function writeNodeEndpoints(w: Writer, endpoints: readonly NodeEndpoint[]): void {
  w.compactArray(endpoints, (w, e) => {
    w.int32(e.nodeId).compactString(e.host).int32(e.port).compactNullableString(e.rack).endStruct(true)
  })
}
