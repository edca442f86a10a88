/**
 * FindCoordinator: this broker coordinates every group. Up to v3 one key, answered at the top
 * level; v4+ a batch of keys, one coordinator each. Transactions have no coordinator here yet
 * (COORDINATOR_NOT_AVAILABLE); other key types are INVALID_REQUEST.
 */
import { CoordinatorType, type Coordinator, type FindCoordinatorRequest, type FindCoordinatorResponse } from '../../protocol/apis/find-coordinator.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Broker } from '../broker.js'
import type { ApiHandler } from '../request-handler.js'

export function findCoordinatorHandler(broker: Broker): ApiHandler<FindCoordinatorRequest, FindCoordinatorResponse> {
  return (request, { header }) => {
    const find = (key: string): Coordinator => {
      const errorCode =
        request.keyType === CoordinatorType.GROUP
          ? key === ''
            ? ErrorCode.INVALID_REQUEST
            : ErrorCode.NONE
          : request.keyType === CoordinatorType.TRANSACTION
            ? ErrorCode.COORDINATOR_NOT_AVAILABLE
            : ErrorCode.INVALID_REQUEST
      if (errorCode !== ErrorCode.NONE) return { key, nodeId: -1, host: '', port: -1, errorCode, errorMessage: null }
      return { key, nodeId: broker.config.nodeId, host: broker.config.advertisedHost, port: broker.advertisedPort, errorCode, errorMessage: null }
    }
    if (header.apiVersion >= 4) {
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: '', nodeId: 0, host: '', port: 0, coordinators: request.coordinatorKeys.map(find) }
    }
    const c = find(request.key)
    return { throttleTimeMs: 0, errorCode: c.errorCode, errorMessage: null, nodeId: c.nodeId, host: c.host, port: c.port, coordinators: [] }
  }
}
