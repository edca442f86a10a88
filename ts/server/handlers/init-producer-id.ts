/**
 * InitProducerId for idempotent producers (transactionalId null): as Kafka's transaction
 * coordinator does, always a fresh producer id at epoch 0, whatever id and epoch the request
 * carries (v3+ lets a producer send them to bump its epoch; for a non-transactional producer
 * Kafka accepts blindly and hands out a new id). Transactional ids need a transaction
 * coordinator, which ferrolog does not have yet: they get INVALID_REQUEST, which clients treat
 * as fatal (COORDINATOR_NOT_AVAILABLE would make them retry forever).
 */
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../protocol/apis/init-producer-id.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function initProducerIdHandler(broker: BrokerContext): ApiHandler<InitProducerIdRequest, InitProducerIdResponse> {
  return async (request) => {
    if (request.transactionalId !== null) {
      broker.logger.warn('transactional producers are not supported', { transactionalId: request.transactionalId })
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 }
    }
    const producerId = await broker.producerIds.generateProducerId()
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId, producerEpoch: 0 }
  }
}
