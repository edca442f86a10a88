/** ReadShareGroupState (KIP-932, inter-broker): a share partition's state, read by its leader; see ./share-coordinator-request-helper.ts. */
import type { ReadShareGroupStateRequest, ReadShareGroupStateResponse } from '../../protocol/apis/read-share-group-state.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { perPartition } from './share-coordinator-request-helper.js'

export function readShareGroupStateHandler(broker: BrokerContext): ApiHandler<ReadShareGroupStateRequest, ReadShareGroupStateResponse> {
  return async (request, context) => ({
    results: await perPartition(
      broker,
      context,
      request,
      (key, p) => broker.shareCoordinator.readState(key, p.leaderEpoch),
      (partition, errorCode, errorMessage, data) => ({
        partition,
        errorCode,
        errorMessage,
        stateEpoch: data?.stateEpoch ?? 0,
        startOffset: data?.startOffset ?? -1n,
        stateBatches: data?.stateBatches ?? [],
      }),
    ),
  })
}
