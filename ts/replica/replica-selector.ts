/**
 * KIP-392, fetch from the closest replica: which replica a consumer should read a partition
 * from (Kafka's `ReplicaSelector`, `replica.selector.class`). The leader asks the selector on
 * every consumer fetch (replicaId < 0, request v11+); when it picks a follower, the leader reads
 * nothing and answers at once with preferredReadReplica = that follower's broker id.
 *
 * - `LeaderSelector` (Kafka's default): always the leader, so consumers never move.
 * - `RackAwareReplicaSelector`: no client rack -> the leader; else the replicas in the client's
 *   rack: none -> the leader; the leader among them -> the leader; else the most caught-up one
 *   (largest log end offset, then shortest time since it was last caught up).
 *
 * `preferredReadReplicaOf` builds the candidates as Kafka's `ReplicaManager.findPreferredReadReplica`:
 * the leader plus the in-sync followers whose log holds the fetch offset; it answers -1 when the
 * selection is the leader (the leader never names itself).
 */

/** What the selector knows of one replica (Kafka's `ReplicaView`). */
export interface ReplicaView {
  brokerId: number
  /** The broker's rack, null when it has none. */
  rack: string | null
  logStartOffset: bigint
  logEndOffset: bigint
  timeSinceLastCaughtUpMs: number
}

/** The candidates of one partition (Kafka's `PartitionView`); replicas include the leader. */
export interface PartitionView {
  leader: ReplicaView
  replicas: readonly ReplicaView[]
}

/** The fetching client (Kafka's `ClientMetadata`). */
export interface ClientMetadata {
  rackId: string
  clientId: string
}

export interface ReplicaSelector {
  /** The replica to read from, or null for no preference. */
  select(tp: { topic: string; partition: number }, client: ClientMetadata, partition: PartitionView): ReplicaView | null
}

/** Kafka's `LeaderSelector`. */
export class LeaderSelector implements ReplicaSelector {
  select(_tp: { topic: string; partition: number }, _client: ClientMetadata, partition: PartitionView): ReplicaView {
    return partition.leader
  }
}

/** Kafka's `RackAwareReplicaSelector`. */
export class RackAwareReplicaSelector implements ReplicaSelector {
  select(_tp: { topic: string; partition: number }, client: ClientMetadata, partition: PartitionView): ReplicaView {
    if (!client.rackId) return partition.leader
    const sameRack = partition.replicas.filter((r) => r.rack === client.rackId)
    if (sameRack.length === 0) return partition.leader
    if (sameRack.some((r) => r.brokerId === partition.leader.brokerId)) return partition.leader
    return sameRack.reduce((best, r) => (moreCaughtUp(r, best) ? r : best))
  }
}

/** Kafka's `ReplicaView.comparator`: larger log end offset, then more recently caught up. */
function moreCaughtUp(a: ReplicaView, b: ReplicaView): boolean {
  if (a.logEndOffset !== b.logEndOffset) return a.logEndOffset > b.logEndOffset
  return a.timeSinceLastCaughtUpMs < b.timeSinceLastCaughtUpMs
}

/** A partition as the leader sees it: itself, its followers and who is in sync. */
export interface LeaderReplicaState {
  leader: ReplicaView
  followers: readonly ReplicaView[]
  isr: ReadonlySet<number>
}

/** The follower a consumer should read from, or -1 (read from the leader). */
export function preferredReadReplicaOf(selector: ReplicaSelector, tp: { topic: string; partition: number }, client: ClientMetadata, fetchOffset: bigint, state: LeaderReplicaState): number {
  const candidates = state.followers.filter((r) => state.isr.has(r.brokerId) && r.logStartOffset <= fetchOffset && fetchOffset <= r.logEndOffset)
  const selected = selector.select(tp, client, { leader: state.leader, replicas: [state.leader, ...candidates] })
  return selected === null || selected.brokerId === state.leader.brokerId ? -1 : selected.brokerId
}
