/** WriteShareGroupState (KIP-932, inter-broker): the state batches of a share partition that changed; see ./share-coordinator-request-helper.ts. */
import type { WriteShareGroupStateRequest, WriteShareGroupStateResponse } from '../../protocol/apis/write-share-group-state.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { perPartition } from './share-coordinator-request-helper.js'

export function writeShareGroupStateHandler(broker: BrokerContext): ApiHandler<WriteShareGroupStateRequest, WriteShareGroupStateResponse> {
  return async (request, context) => ({
    results: await perPartition(
      broker,
      context,
      request,
      (key, p) => broker.shareCoordinator.writeState(key, p),
      (partition, errorCode, errorMessage) => ({ partition, errorCode, errorMessage }),
    ),
  })
}
