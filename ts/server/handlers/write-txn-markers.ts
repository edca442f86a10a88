/**
 * WriteTxnMarkers: a transaction coordinator (on another broker) has this broker, the leader of
 * some of the transaction's partitions, append the COMMIT or ABORT markers
 * (ts/server/txn-marker-writer.ts); answered per partition once their ISR holds them.
 */
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../protocol/apis/write-txn-markers.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function writeTxnMarkersHandler(broker: BrokerContext): ApiHandler<WriteTxnMarkersRequest, WriteTxnMarkersResponse> {
  return async (request) => ({ markers: await broker.txnMarkerWriter.writeTxnMarkers(request.markers) })
}
