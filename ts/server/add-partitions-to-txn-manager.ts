/**
 * Transaction verification at the partition leader (KIP-890 part 1; Kafka's
 * `AddPartitionsToTxnManager` and `ReplicaManager.maybeStartTransactionVerificationForPartition`,
 * transaction.partition.verification.enable): before the first transactional batch of a
 * producer's transaction is appended to a partition (its producer state has no open transaction
 * at that epoch), the leader asks the transactional id's coordinator whether the partition is in
 * the ongoing transaction (AddPartitionsToTxn v4 with verifyOnly; this broker's own coordinator
 * directly). A producer whose transaction was aborted meanwhile (a timeout, a new producer of its
 * id) cannot start a "hanging" transaction in the partition that no marker would ever end.
 *
 * The coordinator's answer, as Kafka translates it for Produce: NONE appends; INVALID_TXN_STATE
 * (not in the transaction) and INVALID_PRODUCER_ID_MAPPING are answered as they are;
 * PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH; the retriable ones (CONCURRENT_TRANSACTIONS, a
 * coordinator loading, moved or unreachable) become NOT_ENOUGH_REPLICAS, which every client
 * retries without refreshing its metadata.
 */
import type { ClientSecurity } from '../client/client-security.js'
import { NetworkClient } from '../client/network-client.js'
import type { TransactionCoordinator } from '../coordinator/transaction/transaction-coordinator.js'
import type { Logger } from '../logger.js'
import { ADD_PARTITIONS_TO_TXN_BATCHED_FROM, addPartitionsToTxnCodec } from '../protocol/apis/add-partitions-to-txn.js'
import { ErrorCode } from '../protocol/error-codes.js'

type Tp = { topic: string; partition: number }

export interface AddPartitionsToTxnManagerDeps {
  brokerId: number
  /** The coordinator of a transactional id (the leader of its `__transaction_state` partition), if alive. */
  coordinatorNode(transactionalId: string): { id: number; host: string; port: number } | undefined
  coordinator: TransactionCoordinator
  logger: Logger
  /** The inter-broker listener's security (ts/server/inter-broker-security.ts); default PLAINTEXT. */
  security?(): ClientSecurity
}

export class AddPartitionsToTxnManager {
  private readonly deps: AddPartitionsToTxnManagerDeps
  private readonly clients = new Map<number, Promise<NetworkClient>>()

  constructor(deps: AddPartitionsToTxnManagerDeps) {
    this.deps = deps
  }

  /** The Produce error for the partition: NONE when the coordinator says it is in the transaction. */
  async verifyTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, tp: Tp): Promise<number> {
    const node = this.deps.coordinatorNode(transactionalId)
    if (!node) return ErrorCode.NOT_ENOUGH_REPLICAS
    let errorCode: number
    if (node.id === this.deps.brokerId) {
      errorCode = this.deps.coordinator.handleVerifyPartitionsInTransaction(transactionalId, producerId, producerEpoch, [tp])[0]!.errorCode
    } else {
      try {
        errorCode = await this.verifyRemote(node, transactionalId, producerId, producerEpoch, tp)
      } catch (err) {
        this.deps.logger.warn('transaction verification failed', { transactionalId, coordinator: node.id, error: (err as Error).message })
        errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE
      }
    }
    return produceErrorOf(errorCode)
  }

  private async verifyRemote(node: { id: number; host: string; port: number }, transactionalId: string, producerId: bigint, producerEpoch: number, tp: Tp): Promise<number> {
    let client = this.clients.get(node.id)
    if (!client) {
      client = NetworkClient.connect(`${node.host}:${node.port}`, { clientId: `broker-${this.deps.brokerId}-txn-verifier`, security: this.deps.security?.() })
      this.clients.set(node.id, client)
    }
    try {
      const response = await (
        await client
      ).send(addPartitionsToTxnCodec, ADD_PARTITIONS_TO_TXN_BATCHED_FROM, {
        transactions: [{ transactionalId, producerId, producerEpoch, verifyOnly: true, topics: [{ name: tp.topic, partitions: [tp.partition] }] }],
        // v0-v3's top-level transaction, at its defaults (not on the wire in v4)
        v3AndBelowTransactionalId: '',
        v3AndBelowProducerId: 0n,
        v3AndBelowProducerEpoch: 0,
        v3AndBelowTopics: [],
      })
      if (response.errorCode !== ErrorCode.NONE) return response.errorCode
      return response.resultsByTransaction[0]?.topicResults[0]?.resultsByPartition[0]?.partitionErrorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR
    } catch (err) {
      this.clients.delete(node.id)
      void client.then((c) => c.close()).catch(() => {})
      throw err
    }
  }

  async stop(): Promise<void> {
    const clients = [...this.clients.values()]
    this.clients.clear()
    await Promise.all(clients.map((c) => c.then((c) => c.close()).catch(() => {})))
  }
}

/** Kafka's translation of a verification's coordinator error for the Produce answer. */
export function produceErrorOf(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.NONE:
    case ErrorCode.INVALID_TXN_STATE:
    case ErrorCode.INVALID_PRODUCER_ID_MAPPING:
    case ErrorCode.INVALID_PRODUCER_EPOCH:
      return errorCode
    case ErrorCode.PRODUCER_FENCED:
      return ErrorCode.INVALID_PRODUCER_EPOCH
    default:
      return ErrorCode.NOT_ENOUGH_REPLICAS
  }
}
