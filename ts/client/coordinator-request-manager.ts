/**
 * Kafka's CoordinatorRequestManager: finds a group's coordinator (FindCoordinator, key type 0;
 * v4+ batches keys, earlier versions take one) and remembers its node id until a request to it
 * fails (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a lost connection): `markCoordinatorUnknown`
 * and the next `ensureCoordinatorReady` asks again, every retry.backoff.ms until the deadline.
 */
import { CoordinatorType, findCoordinatorCodec } from '../protocol/apis/find-coordinator.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { KafkaClientError } from './errors.js'
import type { NetworkClient } from './network-client.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** FindCoordinator errors after which Kafka asks again. */
const RETRY_FIND = new Set<number>([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR])

export class CoordinatorRequestManager {
  private coordinatorId: number | null = null

  constructor(
    private readonly client: NetworkClient,
    readonly groupId: string,
    private readonly retryBackoffMs: number,
  ) {}

  /** The coordinator's node id, when known. */
  get coordinator(): number | null {
    return this.coordinatorId
  }

  markCoordinatorUnknown(): void {
    this.coordinatorId = null
  }

  /** FindCoordinator until one answers (or `deadline` passes); the coordinator's node id. */
  async ensureCoordinatorReady(deadline: number, closed: () => boolean = () => false): Promise<number> {
    while (this.coordinatorId === null) {
      if (closed()) throw new KafkaClientError('CLIENT_CLOSED', 'the consumer is closed')
      try {
        const nodeId = this.client.candidateNodes()[0]!
        const res = await this.client.request(nodeId, findCoordinatorCodec, (v) =>
          v >= 4 ? { key: '', keyType: CoordinatorType.GROUP, coordinatorKeys: [this.groupId] } : { key: this.groupId, keyType: CoordinatorType.GROUP, coordinatorKeys: [] },
        )
        const c = res.coordinators[0] ?? res
        if (c.errorCode === ErrorCode.NONE) {
          if (!this.client.metadata.node(c.nodeId)) await this.client.refreshMetadata([])
          this.coordinatorId = c.nodeId
          break
        }
        if (!RETRY_FIND.has(c.errorCode)) throw KafkaClientError.fromErrorCode(c.errorCode, `FindCoordinator ${this.groupId}`, c.errorMessage)
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
      }
      if (Date.now() >= deadline) throw new KafkaClientError('COORDINATOR_NOT_AVAILABLE', `no coordinator found for group ${this.groupId}`)
      await sleep(this.retryBackoffMs)
    }
    return this.coordinatorId
  }
}
