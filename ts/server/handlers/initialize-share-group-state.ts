/** InitializeShareGroupState (KIP-932, inter-broker): a share partition's state begins; see ./share-coordinator-request-helper.ts. */
import type { InitializeShareGroupStateRequest, InitializeShareGroupStateResponse } from '../../protocol/apis/initialize-share-group-state.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { perPartition } from './share-coordinator-request-helper.js'

export function initializeShareGroupStateHandler(broker: BrokerContext): ApiHandler<InitializeShareGroupStateRequest, InitializeShareGroupStateResponse> {
  return async (request, context) => ({
    results: await perPartition(
      broker,
      context,
      request,
      (key, p) => broker.shareCoordinator.initializeState(key, p.stateEpoch, p.startOffset),
      (partition, errorCode, errorMessage) => ({ partition, errorCode, errorMessage }),
    ),
  })
}
