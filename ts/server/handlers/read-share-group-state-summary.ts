/** ReadShareGroupStateSummary (KIP-932, inter-broker): a share partition's start offset and delivery-complete count; see ./share-coordinator-request-helper.ts. */
import type { ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse } from '../../protocol/apis/read-share-group-state-summary.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { perPartition } from './share-coordinator-request-helper.js'

export function readShareGroupStateSummaryHandler(broker: BrokerContext): ApiHandler<ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse> {
  return async (request, context) => ({
    results: await perPartition(
      broker,
      context,
      request,
      (key) => broker.shareCoordinator.readStateSummary(key),
      (partition, errorCode, errorMessage, data) => ({
        partition,
        errorCode,
        errorMessage,
        stateEpoch: data?.stateEpoch ?? 0,
        leaderEpoch: data?.leaderEpoch ?? 0,
        startOffset: data?.startOffset ?? -1n,
        deliveryCompleteCount: data?.deliveryCompleteCount ?? -1,
      }),
    ),
  })
}
