/**
 * Kafka's `Replica`: what a partition's leader knows of one follower, from the Fetch requests it
 * serves that follower (ts/replica/partition.ts `updateFollowerFetchState`):
 *
 * - `logEndOffset`, `logStartOffset`: the follower's, as its last fetch said (the fetch offset is
 *   its log end: everything below it was fetched and appended);
 * - `lastCaughtUpTimeMs`: the last time the follower had everything the leader had, with
 *   Kafka's rule: a fetch at or past the leader's log end *at the time of the follower's previous
 *   fetch* counts as caught up at the previous fetch's time (the follower had all of that then),
 *   and a fetch at the leader's current log end counts at this fetch's time;
 * - `isCaughtUp(leaderEndOffset, now, replicaLagTimeMaxMs)`: in sync for the ISR rule
 *   (replica.lag.time.max.ms): it has the leader's log end, or caught up recently enough.
 *
 * A new replica (or one reset when leadership changes) is unknown: offsets -1, never caught up.
 */
export const UNKNOWN_OFFSET = -1n

export class Replica {
  readonly brokerId: number
  logEndOffset = UNKNOWN_OFFSET
  logStartOffset = UNKNOWN_OFFSET
  lastCaughtUpTimeMs = 0
  /** The time of the follower's last fetch, and the leader's log end offset then. */
  lastFetchTimeMs = 0
  lastFetchLeaderLogEndOffset = UNKNOWN_OFFSET

  constructor(brokerId: number) {
    this.brokerId = brokerId
  }

  /** Kafka's `Replica.updateFetchStateOrThrow`, without the throw: the caller checked the epoch. */
  updateFetchState(fetchOffset: bigint, followerStartOffset: bigint, fetchTimeMs: number, leaderEndOffset: bigint): void {
    if (fetchOffset >= leaderEndOffset) this.lastCaughtUpTimeMs = Math.max(this.lastCaughtUpTimeMs, fetchTimeMs)
    else if (fetchOffset >= this.lastFetchLeaderLogEndOffset) this.lastCaughtUpTimeMs = Math.max(this.lastCaughtUpTimeMs, this.lastFetchTimeMs)
    this.logStartOffset = followerStartOffset
    this.logEndOffset = fetchOffset
    this.lastFetchLeaderLogEndOffset = leaderEndOffset
    this.lastFetchTimeMs = fetchTimeMs
  }

  /** Kafka's `Replica.isCaughtUp`: in sync by the replica.lag.time.max.ms rule. */
  isCaughtUp(leaderEndOffset: bigint, nowMs: number, replicaLagTimeMaxMs: number): boolean {
    return this.logEndOffset === leaderEndOffset || nowMs - this.lastCaughtUpTimeMs <= replicaLagTimeMaxMs
  }

  /** Kafka's `resetReplicaState` on a leadership change: what it knew of the follower is stale. */
  reset(nowMs: number, leaderEndOffset: bigint, isInSync: boolean): void {
    this.logEndOffset = UNKNOWN_OFFSET
    this.logStartOffset = UNKNOWN_OFFSET
    this.lastFetchLeaderLogEndOffset = leaderEndOffset
    this.lastFetchTimeMs = nowMs
    this.lastCaughtUpTimeMs = isInSync ? nowMs : 0
  }
}
