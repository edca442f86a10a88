/** DeleteShareGroupState (KIP-932, inter-broker): a share partition's state is deleted; see ./share-coordinator-request-helper.ts. */
import type { DeleteShareGroupStateRequest, DeleteShareGroupStateResponse } from '../../protocol/apis/delete-share-group-state.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { perPartition } from './share-coordinator-request-helper.js'

export function deleteShareGroupStateHandler(broker: BrokerContext): ApiHandler<DeleteShareGroupStateRequest, DeleteShareGroupStateResponse> {
  return async (request, context) => ({
    results: await perPartition(
      broker,
      context,
      request,
      (key) => broker.shareCoordinator.deleteState(key),
      (partition, errorCode, errorMessage) => ({ partition, errorCode, errorMessage }),
    ),
  })
}
