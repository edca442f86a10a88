/**
 * Kafka's `DelayedShareFetch`: a ShareFetch that found nothing to acquire and waits, at most
 * maxWaitMs, parked in the replica manager's share fetch purgatory under every topic-partition it
 * reads. It is woken like a parked Fetch (an append, a high watermark or last stable offset
 * move: `ReplicaManager.tryCompleteDelayedRequests`) and by its share partitions when records
 * become available again (a release, an expired lock, a member gone). `tryComplete` completes it
 * once some partition could acquire records (`SharePartition.canAcquireRecords`); `onComplete`
 * acquires and answers, on completion or expiry alike (then maybe with nothing).
 */
import { DelayedOperation } from '../purgatory/delayed-operation.js'

export class DelayedShareFetch extends DelayedOperation {
  constructor(
    maxWaitMs: number,
    private readonly canAcquire: () => boolean,
    private readonly answer: () => void,
  ) {
    super(maxWaitMs)
  }

  tryComplete(): boolean {
    return this.canAcquire() ? this.forceComplete() : false
  }

  onComplete(): void {
    this.answer()
  }

  onExpiration(): void {}
}
