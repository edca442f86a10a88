/**
 * Transaction verification and implicit adds at the partition leader (KIP-890; Kafka's
 * `AddPartitionsToTxnManager` and `ReplicaManager.maybeStartTransactionVerificationForPartition`,
 * transaction.partition.verification.enable): before the first transactional batch of a
 * producer's transaction is appended to a partition (its producer state has no open transaction
 * at that epoch), the leader asks the transactional id's coordinator whether the partition is in
 * the ongoing transaction (AddPartitionsToTxn v4 with verifyOnly; this broker's own coordinator
 * directly). A producer whose transaction was aborted meanwhile (a timeout, a new producer of its
 * id) cannot start a "hanging" transaction in the partition that no marker would ever end.
 *
 * What the leader asks depends on the request's version (Kafka's `TransactionSupportedOperation`):
 * - DEFAULT_ERROR (Produce v3-v10, TxnOffsetCommit v0-v3) and GENERIC_ERROR_SUPPORTED (Produce
 *   v11, TxnOffsetCommit v4) verify only; a partition not in the transaction is the coordinator's
 *   TRANSACTION_ABORTABLE, answered INVALID_TXN_STATE to the clients of DEFAULT_ERROR, which do
 *   not know that code.
 * - ADD_PARTITION (Produce v12+, TxnOffsetCommit v5+: a client of transaction version 2, KIP-890
 *   part 2) adds the partition to the transaction (AddPartitionsToTxn v5 without verifyOnly; this
 *   broker's own coordinator directly), whatever transaction.partition.verification.enable says:
 *   without the add, no marker would ever end the transaction in the partition.
 *
 * The coordinator's answer, as Kafka translates it for the append: NONE appends;
 * PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH; the retriable ones (CONCURRENT_TRANSACTIONS, a
 * coordinator loading, moved or unreachable, the connection lost) become NOT_ENOUGH_REPLICAS,
 * which every client retries without refreshing its metadata; the others (INVALID_TXN_STATE,
 * TRANSACTION_ABORTABLE, INVALID_PRODUCER_ID_MAPPING, ...) are answered as they are.
 */
import type { ClientSecurity } from '../client/client-security.js'
import { NetworkClient } from '../client/network-client.js'
import type { TransactionCoordinator } from '../coordinator/transaction/transaction-coordinator.js'
import { TransactionVersion } from '../coordinator/transaction/transaction-version.js'
import type { Logger } from '../logger.js'
import { ADD_PARTITIONS_TO_TXN_BROKER_VERSION, addPartitionsToTxnCodec } from '../protocol/apis/add-partitions-to-txn.js'
import { ErrorCode } from '../protocol/error-codes.js'

type Tp = { topic: string; partition: number }

/** Kafka's `TransactionSupportedOperation`: what a transactional request's version lets the leader do (see above). */
export const TransactionSupportedOperation = { DEFAULT_ERROR: 'DEFAULT_ERROR', GENERIC_ERROR_SUPPORTED: 'GENERIC_ERROR_SUPPORTED', ADD_PARTITION: 'ADD_PARTITION' } as const
export type TransactionSupportedOperation = (typeof TransactionSupportedOperation)[keyof typeof TransactionSupportedOperation]

/** Kafka's `produceRequestVersionToTransactionSupportedOperation`. */
export function produceTransactionOperation(version: number): TransactionSupportedOperation {
  return version > 11 ? TransactionSupportedOperation.ADD_PARTITION : version > 10 ? TransactionSupportedOperation.GENERIC_ERROR_SUPPORTED : TransactionSupportedOperation.DEFAULT_ERROR
}

/** Kafka's `txnOffsetCommitRequestVersionToTransactionSupportedOperation`. */
export function txnOffsetCommitTransactionOperation(version: number): TransactionSupportedOperation {
  return version > 4 ? TransactionSupportedOperation.ADD_PARTITION : version > 3 ? TransactionSupportedOperation.GENERIC_ERROR_SUPPORTED : TransactionSupportedOperation.DEFAULT_ERROR
}

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

  /**
   * Kafka's `addOrVerifyTransaction` for one partition: the error to answer for it (NONE: append).
   */
  async addOrVerifyTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, tp: Tp, operation: TransactionSupportedOperation): Promise<number> {
    const node = this.deps.coordinatorNode(transactionalId)
    if (!node) return ErrorCode.NOT_ENOUGH_REPLICAS
    const add = operation === TransactionSupportedOperation.ADD_PARTITION
    let errorCode: number
    if (node.id === this.deps.brokerId) {
      errorCode = add
        ? await this.deps.coordinator.handleAddPartitionsToTransaction(transactionalId, producerId, producerEpoch, [tp], TransactionVersion.TV_2)
        : this.deps.coordinator.handleVerifyPartitionsInTransaction(transactionalId, producerId, producerEpoch, [tp])[0]!.errorCode
    } else {
      try {
        errorCode = await this.sendRemote(node, transactionalId, producerId, producerEpoch, tp, !add)
      } catch (err) {
        this.deps.logger.warn('transaction verification failed', { transactionalId, coordinator: node.id, error: (err as Error).message })
        errorCode = ErrorCode.NETWORK_EXCEPTION
      }
    }
    if (errorCode === ErrorCode.TRANSACTION_ABORTABLE && operation === TransactionSupportedOperation.DEFAULT_ERROR) errorCode = ErrorCode.INVALID_TXN_STATE
    return produceErrorOf(errorCode)
  }

  private async sendRemote(node: { id: number; host: string; port: number }, transactionalId: string, producerId: bigint, producerEpoch: number, tp: Tp, verifyOnly: boolean): Promise<number> {
    let client = this.clients.get(node.id)
    if (!client) {
      client = NetworkClient.connect(`${node.host}:${node.port}`, { clientId: `broker-${this.deps.brokerId}-txn-verifier`, security: this.deps.security?.() })
      this.clients.set(node.id, client)
    }
    try {
      const response = await (
        await client
      ).send(addPartitionsToTxnCodec, ADD_PARTITIONS_TO_TXN_BROKER_VERSION, {
        transactions: [{ transactionalId, producerId, producerEpoch, verifyOnly, topics: [{ name: tp.topic, partitions: [tp.partition] }] }],
        // v0-v3's top-level transaction, at its defaults (not on the wire in v4+)
        v3AndBelowTransactionalId: '',
        v3AndBelowProducerId: 0n,
        v3AndBelowProducerEpoch: 0,
        v3AndBelowTopics: [],
      })
      // Kafka's: the client is not told of the inter-broker authorization; the verification did not complete.
      if (response.errorCode === ErrorCode.CLUSTER_AUTHORIZATION_FAILED) return ErrorCode.INVALID_TXN_STATE
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

/** Kafka's translation of a verification's (or an add's) coordinator error for the append's answer. */
export function produceErrorOf(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.PRODUCER_FENCED:
      return ErrorCode.INVALID_PRODUCER_EPOCH
    case ErrorCode.CONCURRENT_TRANSACTIONS:
    case ErrorCode.NETWORK_EXCEPTION:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return ErrorCode.NOT_ENOUGH_REPLICAS
    default:
      return errorCode
  }
}
