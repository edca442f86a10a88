/**
 * Produce: validate acks, append each partition's batch as the leader, answer per partition
 * (several batches for one partition: INVALID_RECORD, as Kafka answers from v3 on). The
 * partitions' appends run together: compressed batches are checked off the event loop (their
 * records may inflate to 100 MiB each), so other clients are served meanwhile, as Kafka's
 * other request handler threads serve them.
 * acks=1 answers after the local append; acks=0 sends no response at all, as Kafka does.
 * acks=-1 (all): a partition whose ISR is under min.insync.replicas refuses the append
 * (NOT_ENOUGH_REPLICAS); the others' answers wait, at most the request's timeoutMs, until the
 * ISR holds their records (`ReplicaManager.maybeAddDelayedProduce`: REQUEST_TIMED_OUT,
 * NOT_LEADER_OR_FOLLOWER or NOT_ENOUGH_REPLICAS_AFTER_APPEND otherwise). A partition without
 * followers holds them with the append: it answers at once, as acks=1. A connection that closes
 * drops its waiting produce (the records stay appended).
 *
 * A transactional batch that would start its producer's transaction in the partition is first
 * verified with the transaction coordinator (KIP-890 part 1, ts/server/add-partitions-to-txn-manager.ts,
 * unless transaction.partition.verification.enable=false): a partition not in the transaction
 * is INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v11 on) and nothing is appended. From v12 on
 * (a client of transaction version 2, KIP-890 part 2) the coordinator adds the partition to
 * the transaction instead: the client sends no AddPartitionsToTxn.
 *
 * Producer quotas (producer_byte_rate, ts/quota/client-quota-manager.ts), as Kafka's
 * handleProduceRequest: once the partitions are answered, the request's size is recorded against
 * the client's quota; over it, the answer carries throttle_time_ms and the connection is muted
 * for that long (acks=0 too, which has no answer to carry it). The records are appended either
 * way.
 *
 * Authorization (Kafka's): a transactional request needs WRITE on its transactional id
 * (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition), each topic WRITE
 * (TOPIC_AUTHORIZATION_FAILED, before telling whether it exists).
 */
import { NO_CURRENT_LEADER, type PartitionProduceResponse, type ProduceRequest, type ProduceResponse } from '../../protocol/apis/produce.js'
import { ZERO_UUID } from '../../protocol/apis/common.js'
import { isInternalTopic } from '../internal-topics.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { TRANSACTIONAL_FLAG_MASK, CONTROL_FLAG_MASK, type BatchHeader } from '../../protocol/batch-header.js'
import { batchesOf } from '../../protocol/records.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { quotaNowMs } from '../../quota/client-quota-managers.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import type { AppendRecordsResult, ProduceAcksResult } from '../../replica/replica-manager.js'
import { produceTransactionOperation, TransactionSupportedOperation } from '../add-partitions-to-txn-manager.js'

const ONE_BATCH = 'Produce requests with version 3 and above must have exactly one record batch per partition'

/** The header of the first batch, when it is a transactional data batch of a producer. */
function transactionalHeader(records: Buffer): BatchHeader | null {
  try {
    for (const { header } of batchesOf(records)) {
      const transactional = (header.attributes & TRANSACTIONAL_FLAG_MASK) !== 0 && (header.attributes & CONTROL_FLAG_MASK) === 0
      return transactional && header.producerId >= 0n ? header : null
    }
  } catch {
    // left to the append to reject
  }
  return null
}

/**
 * Kafka's `maybeStartTransactionVerificationForPartition`: NONE when no verification is needed
 * (not transactional, verification off for a request that only verifies, or the producer's
 * transaction is open in the partition at this epoch already), else the coordinator's answer
 * (for v12+, once it added the partition).
 */
async function verifyTransaction(broker: BrokerContext, transactionalId: string | null, tp: { topic: string; partition: number }, records: Buffer, version: number): Promise<number> {
  const operation = produceTransactionOperation(version)
  if (transactionalId === null || (operation !== TransactionSupportedOperation.ADD_PARTITION && !broker.config.transactionPartitionVerificationEnable)) return ErrorCode.NONE
  const h = transactionalHeader(records)
  if (h === null) return ErrorCode.NONE
  const partition = broker.replicaManager.getPartition(tp)
  if (!partition || !partition.isLeader) return ErrorCode.NONE
  const entry = partition.producerState().lastEntry(h.producerId)
  if (entry && entry.producerEpoch === h.producerEpoch && entry.currentTxnFirstOffset !== null) return ErrorCode.NONE
  return broker.addPartitionsToTxnManager.addOrVerifyTransaction(transactionalId, h.producerId, h.producerEpoch, tp, operation)
}

/** How many batches the records hold; what cannot be walked is left to the append to reject. */
function batchCount(records: Buffer): number {
  let n = 0
  try {
    for (const _ of batchesOf(records)) if (++n > 1) break
  } catch {
    return n
  }
  return n
}

export function produceHandler(broker: BrokerContext): ApiHandler<ProduceRequest, ProduceResponse> {
  return async (request, context) => {
    const { connection } = context
    const validAcks = request.acks === 0 || request.acks === 1 || request.acks === -1
    // Kafka's order: the transactional id (the whole request), then WRITE on each topic.
    const txnDenied = request.transactionalId !== null && !broker.auth.authorize(context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)
    const writable = broker.auth.filterByAuthorized(
      context,
      AclOperation.WRITE,
      ResourceType.TOPIC,
      request.topicData.map((t) => t.name),
    )
    /** The local appends, for the acks=all wait. */
    const appended: { topic: string; partition: number; result: AppendRecordsResult }[] = []
    const appends = request.topicData.map((topic) => ({
      name: topic.name,
      partitionResponses: topic.partitionData.map(async (p): Promise<PartitionProduceResponse> => {
        const base = { index: p.index, logAppendTimeMs: -1n, recordErrors: [], errorMessage: null, currentLeader: NO_CURRENT_LEADER }
        if (!validAcks) return { ...base, errorCode: ErrorCode.INVALID_REQUIRED_ACKS, baseOffset: -1n, logStartOffset: -1n }
        if (txnDenied) return { ...base, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, baseOffset: -1n, logStartOffset: -1n }
        if (!writable.has(topic.name)) return { ...base, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, baseOffset: -1n, logStartOffset: -1n }
        // The internal logs are written by their coordinators only, as in Kafka.
        if (isInternalTopic(topic.name)) return { ...base, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, baseOffset: -1n, logStartOffset: -1n }
        // Kafka's ProduceRequest.validateRecords: from v3 on, exactly one batch per partition.
        if (p.records !== null && batchCount(p.records) > 1) {
          return { ...base, errorCode: ErrorCode.INVALID_RECORD, errorMessage: ONE_BATCH, baseOffset: -1n, logStartOffset: -1n }
        }
        const tp = { topic: topic.name, partition: p.index }
        if (p.records !== null) {
          const verified = await verifyTransaction(broker, request.transactionalId, tp, p.records, context.header.apiVersion)
          if (verified !== ErrorCode.NONE)
            return { ...base, errorCode: verified, errorMessage: verified === ErrorCode.INVALID_TXN_STATE ? 'Partition was not added to the transaction' : null, baseOffset: -1n, logStartOffset: -1n }
        }
        const result = await broker.replicaManager.appendRecords(tp, p.records, request.acks)
        appended.push({ ...tp, result })
        return {
          ...base,
          errorCode: result.errorCode,
          errorMessage: result.errorMessage,
          // KIP-467: the records the log refused one by one (Produce v8+), as Kafka's ReplicaManager.
          recordErrors: (result.recordErrors ?? []).map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message })),
          baseOffset: result.info?.firstOffset ?? -1n,
          logAppendTimeMs: result.info?.logAppendTime ?? -1n,
          logStartOffset: result.logStartOffset,
        }
      }),
    }))
    // Every partition's append is under way (compressed ones checked off the loop, in parallel);
    // the answer waits for all, acks=0 too (no answer, but the next request comes after them).
    const responses = await Promise.all(appends.map(async (t) => ({ name: t.name, topicId: ZERO_UUID, partitionResponses: await Promise.all(t.partitionResponses) })))
    // Recorded when the answer is ready (after the acks=all wait), as Kafka's response callback.
    const throttle = (): number => {
      if (!broker.quotas.produce.quotasEnabled) return 0 // no produce quota anywhere: nothing recorded, as Kafka
      const ms = broker.quotas.produce.maybeRecordAndGetThrottleTimeMs(connection.principal.name, context.header.clientId ?? '', context.requestSize ?? 0, quotaNowMs())
      connection.throttle(ms)
      return ms
    }
    if (request.acks === 0) {
      throttle()
      return null
    }
    if (request.acks === -1 && appended.length > 0) {
      const waited = awaitAcks(broker, request.timeoutMs, appended, connection)
      const results = waited instanceof Promise ? await waited : waited
      if (results === null) return null // the client went away
      const acks = new Map(results.map((r) => [`${r.topic}\0${r.partition}`, r.errorCode]))
      for (const t of responses) {
        for (const r of t.partitionResponses) {
          const errorCode = acks.get(`${t.name}\0${r.index}`)
          if (errorCode !== undefined && errorCode !== r.errorCode) {
            r.errorCode = errorCode
            r.errorMessage = null
          }
        }
      }
    }
    return { responses, throttleTimeMs: throttle(), nodeEndpoints: [] }
  }
}

/**
 * The acks=all answer of every appended partition: at once when the ISR holds the records
 * already (a partition without followers), else a promise of it; null if the connection closed
 * first.
 */
function awaitAcks(
  broker: BrokerContext,
  timeoutMs: number,
  appended: { topic: string; partition: number; result: AppendRecordsResult }[],
  connection: { onClosed(listener: () => void): () => void },
): ProduceAcksResult[] | Promise<ProduceAcksResult[] | null> {
  let now: ProduceAcksResult[] | null = null
  let later: ((results: ProduceAcksResult[] | null) => void) | null = null
  let stopWatchingClose = () => {}
  const drop = broker.replicaManager.maybeAddDelayedProduce(-1, timeoutMs, appended, (results: ProduceAcksResult[]) => {
    if (later === null) {
      now = results
      return
    }
    stopWatchingClose()
    later(results)
  })
  if (now !== null) return now
  return new Promise((resolve) => {
    later = resolve
    stopWatchingClose = connection.onClosed(() => {
      drop()
      resolve(null)
    })
  })
}
