/**
 * One member of a classic group (Kafka's `MemberMetadata`): who it is, the protocols it
 * supports with their metadata, its timeouts, the assignment the leader gave it, and the
 * JoinGroup or SyncGroup response it is waiting for while a rebalance runs.
 */
import type { JoinGroupRequestProtocol } from '../protocol/apis/join-group.js'

/** What a member waiting in JoinGroup is finally answered (Kafka's `JoinGroupResult`). */
export interface JoinResult {
  errorCode: number
  generationId: number
  protocolType: string | null
  protocolName: string | null
  leader: string
  memberId: string
  /** The leader gets every member with its metadata for the chosen protocol; others get []. */
  members: Array<{ memberId: string; groupInstanceId: string | null; metadata: Buffer }>
}

/** What a member waiting in SyncGroup is finally answered. */
export interface SyncResult {
  errorCode: number
  protocolType: string | null
  protocolName: string | null
  assignment: Buffer
}

const EMPTY = Buffer.alloc(0)

export class MemberMetadata {
  readonly memberId: string
  readonly groupInstanceId: string | null
  readonly clientId: string
  readonly clientHost: string
  protocolType: string
  protocols: JoinGroupRequestProtocol[]
  sessionTimeoutMs: number
  rebalanceTimeoutMs: number
  assignment: Buffer = Buffer.alloc(0)
  /** Set while the member waits for the end of the join phase. */
  awaitingJoin: ((result: JoinResult) => void) | null = null
  /** Set while the member waits for the leader's assignment. */
  awaitingSync: ((result: SyncResult) => void) | null = null
  /** A member that joined during this rebalance and never completed a generation. */
  isNew = false
  /** When the session expires unless a heartbeat (or join, sync, commit) comes first. */
  heartbeatDeadlineMs = 0

  constructor(init: {
    memberId: string
    groupInstanceId: string | null
    clientId: string
    clientHost: string
    protocolType: string
    protocols: JoinGroupRequestProtocol[]
    sessionTimeoutMs: number
    rebalanceTimeoutMs: number
  }) {
    this.memberId = init.memberId
    this.groupInstanceId = init.groupInstanceId
    this.clientId = init.clientId
    this.clientHost = init.clientHost
    this.protocolType = init.protocolType
    this.protocols = init.protocols
    this.sessionTimeoutMs = init.sessionTimeoutMs
    this.rebalanceTimeoutMs = init.rebalanceTimeoutMs
  }

  get isAwaitingJoin(): boolean {
    return this.awaitingJoin !== null
  }

  /** The metadata this member sent for a protocol, or undefined when it does not support it. */
  metadataFor(protocolName: string): Buffer | undefined {
    return this.protocols.find((p) => p.name === protocolName)?.metadata
  }

  /** Same protocols, in the same order, with the same metadata (Kafka's `matches`). */
  matches(protocols: readonly JoinGroupRequestProtocol[]): boolean {
    return protocols.length === this.protocols.length && protocols.every((p, i) => p.name === this.protocols[i]!.name && p.metadata.equals(this.protocols[i]!.metadata))
  }

  /** The first of `candidates` in this member's order of preference (its vote). */
  vote(candidates: ReadonlySet<string>): string | undefined {
    return this.protocols.find((p) => candidates.has(p.name))?.name
  }

  /** Answers a waiting JoinGroup; true when there was one. */
  completeJoin(result: JoinResult): boolean {
    const callback = this.awaitingJoin
    if (!callback) return false
    this.awaitingJoin = null
    callback(result)
    return true
  }

  /** Answers a waiting SyncGroup; true when there was one. */
  completeSync(result: SyncResult): boolean {
    const callback = this.awaitingSync
    if (!callback) return false
    this.awaitingSync = null
    callback(result)
    return true
  }
}

export function joinError(errorCode: number, memberId: string): JoinResult {
  return { errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId, members: [] }
}

export function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY }
}
