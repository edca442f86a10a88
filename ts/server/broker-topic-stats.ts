/**
 * Kafka's `BrokerTopicStats`, the part ferrolog counts: the record bytes its Fetch responses
 * carried, to consumers (`BytesOutPerSec`) and to follower replicas (`ReplicationBytesOutPerSec`),
 * as totals since start (`/metrics`: ferrolog_bytes_out_total, ferrolog_replication_bytes_out_total).
 * A follower serving a consumer (KIP-392's preferred read replica) counts it as bytes out.
 */
export class BrokerTopicStats {
  /** Record bytes sent to consumers. */
  bytesOut = 0
  /** Record bytes sent to followers. */
  replicationBytesOut = 0

  updateBytesOut(isFollower: boolean, bytes: number): void {
    if (isFollower) this.replicationBytesOut += bytes
    else this.bytesOut += bytes
  }
}
