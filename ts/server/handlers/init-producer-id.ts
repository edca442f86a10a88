/**
 * InitProducerId. An idempotent producer (transactionalId null) gets a fresh producer id at
 * epoch 0, whatever id and epoch the request carries (v3+ lets a producer send them to bump its
 * epoch; for a non-transactional producer Kafka hands out a new id). A transactional one goes to
 * the transaction coordinator (ts/coordinator/transaction/transaction-coordinator.ts), which
 * bumps its epoch, fences the previous producer of the id and aborts its open transaction.
 */
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../protocol/apis/init-producer-id.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import { producerFencedFor } from './producer-fenced.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

/** The ongoing transaction's producer is v6's (KIP-939 two-phase commit), which is not served. */
const NO_ONGOING_TXN = { ongoingTxnProducerId: -1n, ongoingTxnProducerEpoch: -1 }

export function initProducerIdHandler(broker: BrokerContext): ApiHandler<InitProducerIdRequest, InitProducerIdResponse> {
  return async (request, context) => {
    const { header } = context
    // Kafka's: WRITE on the transactional id; an idempotent producer IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
    if (request.transactionalId !== null && !broker.auth.authorize(context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId))
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1, ...NO_ONGOING_TXN }
    if (
      request.transactionalId === null &&
      !broker.auth.authorizeCluster(context, AclOperation.IDEMPOTENT_WRITE) &&
      !broker.auth.authorizeByResourceType(context, AclOperation.WRITE, ResourceType.TOPIC)
    )
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1, ...NO_ONGOING_TXN }
    if (request.transactionalId === null) {
      const producerId = await broker.producerIds.generateProducerId()
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId, producerEpoch: 0, ...NO_ONGOING_TXN }
    }
    // KIP-360: both -1 (a new producer) or both set (a producer bumping its own epoch).
    const given = request.producerId !== -1n || request.producerEpoch !== -1
    if (given && (request.producerId === -1n || request.producerEpoch === -1)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1, ...NO_ONGOING_TXN }
    }
    const expected = given ? { producerId: request.producerId, producerEpoch: request.producerEpoch } : null
    const result = await broker.transactionCoordinator.handleInitProducerId(request.transactionalId, request.transactionTimeoutMs, expected)
    return { throttleTimeMs: 0, ...result, errorCode: producerFencedFor(result.errorCode, header.apiVersion, 4), ...NO_ONGOING_TXN }
  }
}
