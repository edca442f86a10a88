/**
 * Kafka's `ShareSessionCache` (KIP-932): one share session per (group, member) on this broker,
 * holding the partitions the member fetches, so a ShareFetch names only what changed.
 *
 * Epochs (Kafka's `ShareRequestMetadata`): a request with epoch 0 opens a session (replacing the
 * member's previous one) with the partitions it names; the session then expects epoch 1, 2, ...
 * (after INT32_MAX, 1 again), one per ShareFetch or ShareAcknowledge; epoch -1 closes it. A
 * request for a session that does not exist answers SHARE_SESSION_NOT_FOUND, one with another
 * epoch INVALID_SHARE_SESSION_EPOCH; a new session past group.share.max.share.sessions
 * SHARE_SESSION_LIMIT_REACHED.
 *
 * A session belongs to the connection that opened it: when that connection closes, the session
 * goes, and the member's acquired records are released (Kafka's connection disconnect listener);
 * `onSessionClosed` does that.
 */

export const INITIAL_EPOCH = 0
export const FINAL_EPOCH = -1

/** Kafka's `ShareRequestMetadata.nextEpoch`. */
export function nextEpoch(epoch: number): number {
  if (epoch === INITIAL_EPOCH) return 1
  if (epoch === FINAL_EPOCH) return FINAL_EPOCH
  return epoch === 0x7fffffff ? 1 : epoch + 1
}

/** One partition of a session: the topic id (hex), its name, the partition. */
export interface SharePartitionRef {
  topicId: string
  topic: string
  partition: number
}

export function sharePartitionRefKey(p: Pick<SharePartitionRef, 'topicId' | 'partition'>): string {
  return `${p.topicId}:${p.partition}`
}

export class ShareSession {
  /** The epoch the next request must carry. */
  epoch = 1
  readonly partitions = new Map<string, SharePartitionRef>()

  constructor(
    readonly groupId: string,
    readonly memberId: string,
    readonly connectionId: string,
  ) {}

  /** Adds the partitions named, drops those to forget (Kafka's `ShareSession.update`). */
  update(add: readonly SharePartitionRef[], forget: readonly SharePartitionRef[]): void {
    for (const p of add) this.partitions.set(sharePartitionRefKey(p), p)
    for (const p of forget) this.partitions.delete(sharePartitionRefKey(p))
  }
}

export class ShareSessionCache {
  private readonly sessions = new Map<string, ShareSession>()

  constructor(
    /** group.share.max.share.sessions */
    private readonly maxSessions: number,
    /** A session went with its connection: release what its member holds. */
    private readonly onSessionClosed: (session: ShareSession) => void,
  ) {}

  get(groupId: string, memberId: string): ShareSession | undefined {
    return this.sessions.get(key(groupId, memberId))
  }

  size(): number {
    return this.sessions.size
  }

  /** A new session (epoch 1 next) after removing the member's previous one; null at the limit. */
  maybeCreateSession(groupId: string, memberId: string, partitions: readonly SharePartitionRef[], connectionId: string): ShareSession | null {
    this.sessions.delete(key(groupId, memberId))
    if (this.sessions.size >= this.maxSessions) return null
    const session = new ShareSession(groupId, memberId, connectionId)
    session.update(partitions, [])
    this.sessions.set(key(groupId, memberId), session)
    return session
  }

  remove(groupId: string, memberId: string): ShareSession | undefined {
    const k = key(groupId, memberId)
    const session = this.sessions.get(k)
    this.sessions.delete(k)
    return session
  }

  /** The connection closed: its sessions go and their members' records are released. */
  connectionClosed(connectionId: string): void {
    for (const [k, session] of this.sessions) {
      if (session.connectionId !== connectionId) continue
      this.sessions.delete(k)
      this.onSessionClosed(session)
    }
  }
}

function key(groupId: string, memberId: string): string {
  return `${groupId}\u0000${memberId}`
}
