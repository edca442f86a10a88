/** Every ApiKey the broker serves, with its codec and handler. */
import { apiVersionsCodec } from '../../protocol/apis/api-versions.js'
import { createTopicsCodec } from '../../protocol/apis/create-topics.js'
import { fetchCodec, type FetchRequest, type FetchResponse, type ResponseRecords } from '../../protocol/apis/fetch.js'
import type { ApiCodec } from '../../protocol/apis/api.js'
import { initProducerIdCodec } from '../../protocol/apis/init-producer-id.js'
import { createPartitionsCodec } from '../../protocol/apis/create-partitions.js'
import { deleteRecordsCodec } from '../../protocol/apis/delete-records.js'
import { deleteTopicsCodec } from '../../protocol/apis/delete-topics.js'
import { describeConfigsCodec } from '../../protocol/apis/describe-configs.js'
import { offsetForLeaderEpochCodec } from '../../protocol/apis/offset-for-leader-epoch.js'
import { listOffsetsCodec } from '../../protocol/apis/list-offsets.js'
import { metadataCodec } from '../../protocol/apis/metadata.js'
import { produceCodec } from '../../protocol/apis/produce.js'
import { findCoordinatorCodec } from '../../protocol/apis/find-coordinator.js'
import { joinGroupCodec } from '../../protocol/apis/join-group.js'
import { syncGroupCodec } from '../../protocol/apis/sync-group.js'
import { heartbeatCodec } from '../../protocol/apis/heartbeat.js'
import { leaveGroupCodec } from '../../protocol/apis/leave-group.js'
import { offsetCommitCodec } from '../../protocol/apis/offset-commit.js'
import { offsetFetchCodec } from '../../protocol/apis/offset-fetch.js'
import { describeGroupsCodec } from '../../protocol/apis/describe-groups.js'
import { listGroupsCodec } from '../../protocol/apis/list-groups.js'
import { alterConfigsCodec } from '../../protocol/apis/alter-configs.js'
import { incrementalAlterConfigsCodec } from '../../protocol/apis/incremental-alter-configs.js'
import { describeLogDirsCodec } from '../../protocol/apis/describe-log-dirs.js'
import { describeClusterCodec } from '../../protocol/apis/describe-cluster.js'
import { deleteGroupsCodec } from '../../protocol/apis/delete-groups.js'
import { offsetDeleteCodec } from '../../protocol/apis/offset-delete.js'
import { addPartitionsToTxnCodec } from '../../protocol/apis/add-partitions-to-txn.js'
import { addOffsetsToTxnCodec } from '../../protocol/apis/add-offsets-to-txn.js'
import { endTxnCodec } from '../../protocol/apis/end-txn.js'
import { writeTxnMarkersCodec } from '../../protocol/apis/write-txn-markers.js'
import { txnOffsetCommitCodec } from '../../protocol/apis/txn-offset-commit.js'
import { describeProducersCodec } from '../../protocol/apis/describe-producers.js'
import { describeTransactionsCodec } from '../../protocol/apis/describe-transactions.js'
import { listTransactionsCodec } from '../../protocol/apis/list-transactions.js'
import { describeClientQuotasCodec } from '../../protocol/apis/describe-client-quotas.js'
import { alterPartitionReassignmentsCodec } from '../../protocol/apis/alter-partition-reassignments.js'
import { listPartitionReassignmentsCodec } from '../../protocol/apis/list-partition-reassignments.js'
import { alterClientQuotasCodec } from '../../protocol/apis/alter-client-quotas.js'
import { describeUserScramCredentialsCodec } from '../../protocol/apis/describe-user-scram-credentials.js'
import { alterUserScramCredentialsCodec } from '../../protocol/apis/alter-user-scram-credentials.js'
import { saslHandshakeCodec } from '../../protocol/apis/sasl-handshake.js'
import { saslAuthenticateCodec } from '../../protocol/apis/sasl-authenticate.js'
import { describeAclsCodec } from '../../protocol/apis/describe-acls.js'
import { createAclsCodec } from '../../protocol/apis/create-acls.js'
import { deleteAclsCodec } from '../../protocol/apis/delete-acls.js'
import { consumerGroupHeartbeatCodec } from '../../protocol/apis/consumer-group-heartbeat.js'
import { consumerGroupDescribeCodec } from '../../protocol/apis/consumer-group-describe.js'
import { shareGroupHeartbeatCodec } from '../../protocol/apis/share-group-heartbeat.js'
import { shareGroupDescribeCodec } from '../../protocol/apis/share-group-describe.js'
import { initializeShareGroupStateCodec } from '../../protocol/apis/initialize-share-group-state.js'
import { readShareGroupStateCodec } from '../../protocol/apis/read-share-group-state.js'
import { writeShareGroupStateCodec } from '../../protocol/apis/write-share-group-state.js'
import { deleteShareGroupStateCodec } from '../../protocol/apis/delete-share-group-state.js'
import { readShareGroupStateSummaryCodec } from '../../protocol/apis/read-share-group-state-summary.js'
import { describeShareGroupOffsetsCodec } from '../../protocol/apis/describe-share-group-offsets.js'
import { alterShareGroupOffsetsCodec } from '../../protocol/apis/alter-share-group-offsets.js'
import { deleteShareGroupOffsetsCodec } from '../../protocol/apis/delete-share-group-offsets.js'
import { shareFetchCodec } from '../../protocol/apis/share-fetch.js'
import { shareAcknowledgeCodec } from '../../protocol/apis/share-acknowledge.js'
import { updateFeaturesCodec } from '../../protocol/apis/update-features.js'
import type { KafkaApis } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { findCoordinatorHandler } from './find-coordinator.js'
import { joinGroupHandler } from './join-group.js'
import { syncGroupHandler } from './sync-group.js'
import { heartbeatHandler } from './heartbeat.js'
import { leaveGroupHandler } from './leave-group.js'
import { offsetCommitHandler } from './offset-commit.js'
import { offsetFetchHandler } from './offset-fetch.js'
import { describeGroupsHandler } from './describe-groups.js'
import { listGroupsHandler } from './list-groups.js'
import { deleteGroupsHandler } from './delete-groups.js'
import { offsetDeleteHandler } from './offset-delete.js'
import { apiVersionsHandler } from './api-versions.js'
import { createTopicsHandler } from './create-topics.js'
import { fetchHandler } from './fetch.js'
import { initProducerIdHandler } from './init-producer-id.js'
import { createPartitionsHandler } from './create-partitions.js'
import { deleteRecordsHandler } from './delete-records.js'
import { deleteTopicsHandler } from './delete-topics.js'
import { describeConfigsHandler } from './describe-configs.js'
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch.js'
import { listOffsetsHandler } from './list-offsets.js'
import { metadataHandler } from './metadata.js'
import { produceHandler } from './produce.js'
import { alterConfigsHandler } from './alter-configs.js'
import { incrementalAlterConfigsHandler } from './incremental-alter-configs.js'
import { describeLogDirsHandler } from './describe-log-dirs.js'
import { describeClusterHandler } from './describe-cluster.js'
import { addPartitionsToTxnHandler } from './add-partitions-to-txn.js'
import { addOffsetsToTxnHandler } from './add-offsets-to-txn.js'
import { endTxnHandler } from './end-txn.js'
import { writeTxnMarkersHandler } from './write-txn-markers.js'
import { txnOffsetCommitHandler } from './txn-offset-commit.js'
import { describeProducersHandler } from './describe-producers.js'
import { describeTransactionsHandler } from './describe-transactions.js'
import { listTransactionsHandler } from './list-transactions.js'
import { describeClientQuotasHandler } from './describe-client-quotas.js'
import { alterPartitionReassignmentsHandler } from './alter-partition-reassignments.js'
import { listPartitionReassignmentsHandler } from './list-partition-reassignments.js'
import { alterClientQuotasHandler } from './alter-client-quotas.js'
import { describeUserScramCredentialsHandler } from './describe-user-scram-credentials.js'
import { alterUserScramCredentialsHandler } from './alter-user-scram-credentials.js'
import { saslHandshakeHandler } from './sasl-handshake.js'
import { saslAuthenticateHandler } from './sasl-authenticate.js'
import { describeAclsHandler } from './describe-acls.js'
import { createAclsHandler } from './create-acls.js'
import { deleteAclsHandler } from './delete-acls.js'
import { consumerGroupHeartbeatHandler } from './consumer-group-heartbeat.js'
import { consumerGroupDescribeHandler } from './consumer-group-describe.js'
import { shareGroupHeartbeatHandler } from './share-group-heartbeat.js'
import { shareGroupDescribeHandler } from './share-group-describe.js'
import { initializeShareGroupStateHandler } from './initialize-share-group-state.js'
import { readShareGroupStateHandler } from './read-share-group-state.js'
import { writeShareGroupStateHandler } from './write-share-group-state.js'
import { deleteShareGroupStateHandler } from './delete-share-group-state.js'
import { readShareGroupStateSummaryHandler } from './read-share-group-state-summary.js'
import { describeShareGroupOffsetsHandler } from './describe-share-group-offsets.js'
import { alterShareGroupOffsetsHandler } from './alter-share-group-offsets.js'
import { deleteShareGroupOffsetsHandler } from './delete-share-group-offsets.js'
import { shareFetchHandler } from './share-fetch.js'
import { shareAcknowledgeHandler } from './share-acknowledge.js'
import { updateFeaturesHandler } from './update-features.js'

/** Registers every ApiKey's codec and handler with the dispatcher, handlers bound to `broker`. */
export function registerHandlers(broker: BrokerContext, apis: KafkaApis): void {
  apis
    .register(produceCodec, produceHandler(broker))
    .register(fetchCodec as ApiCodec<FetchRequest, FetchResponse<ResponseRecords>>, fetchHandler(broker))
    .register(listOffsetsCodec, listOffsetsHandler(broker))
    .register(metadataCodec, metadataHandler(broker))
    .register(apiVersionsCodec, apiVersionsHandler(broker))
    .register(createTopicsCodec, createTopicsHandler(broker))
    .register(initProducerIdCodec, initProducerIdHandler(broker))
    .register(deleteTopicsCodec, deleteTopicsHandler(broker))
    .register(createPartitionsCodec, createPartitionsHandler(broker))
    .register(describeConfigsCodec, describeConfigsHandler(broker))
    .register(deleteRecordsCodec, deleteRecordsHandler(broker))
    .register(offsetForLeaderEpochCodec, offsetForLeaderEpochHandler(broker))
    .register(findCoordinatorCodec, findCoordinatorHandler(broker))
    .register(joinGroupCodec, joinGroupHandler(broker))
    .register(syncGroupCodec, syncGroupHandler(broker))
    .register(heartbeatCodec, heartbeatHandler(broker))
    .register(leaveGroupCodec, leaveGroupHandler(broker))
    .register(offsetCommitCodec, offsetCommitHandler(broker))
    .register(offsetFetchCodec, offsetFetchHandler(broker))
    .register(describeGroupsCodec, describeGroupsHandler(broker))
    .register(listGroupsCodec, listGroupsHandler(broker))
    .register(alterConfigsCodec, alterConfigsHandler(broker))
    .register(incrementalAlterConfigsCodec, incrementalAlterConfigsHandler(broker))
    .register(describeLogDirsCodec, describeLogDirsHandler(broker))
    .register(alterPartitionReassignmentsCodec, alterPartitionReassignmentsHandler(broker))
    .register(listPartitionReassignmentsCodec, listPartitionReassignmentsHandler(broker))
    .register(describeClusterCodec, describeClusterHandler(broker))
    .register(deleteGroupsCodec, deleteGroupsHandler(broker))
    .register(offsetDeleteCodec, offsetDeleteHandler(broker))
    .register(addPartitionsToTxnCodec, addPartitionsToTxnHandler(broker))
    .register(addOffsetsToTxnCodec, addOffsetsToTxnHandler(broker))
    .register(endTxnCodec, endTxnHandler(broker))
    .register(writeTxnMarkersCodec, writeTxnMarkersHandler(broker))
    .register(txnOffsetCommitCodec, txnOffsetCommitHandler(broker))
    .register(describeProducersCodec, describeProducersHandler(broker))
    .register(describeTransactionsCodec, describeTransactionsHandler(broker))
    .register(listTransactionsCodec, listTransactionsHandler(broker))
    .register(describeClientQuotasCodec, describeClientQuotasHandler(broker))
    .register(alterClientQuotasCodec, alterClientQuotasHandler(broker))
    .register(describeUserScramCredentialsCodec, describeUserScramCredentialsHandler(broker))
    .register(alterUserScramCredentialsCodec, alterUserScramCredentialsHandler(broker))
    .register(saslHandshakeCodec, saslHandshakeHandler())
    .register(saslAuthenticateCodec, saslAuthenticateHandler())
    .register(describeAclsCodec, describeAclsHandler(broker))
    .register(createAclsCodec, createAclsHandler(broker))
    .register(deleteAclsCodec, deleteAclsHandler(broker))
    .register(consumerGroupHeartbeatCodec, consumerGroupHeartbeatHandler(broker))
    .register(consumerGroupDescribeCodec, consumerGroupDescribeHandler(broker))
    .register(shareGroupHeartbeatCodec, shareGroupHeartbeatHandler(broker))
    .register(shareGroupDescribeCodec, shareGroupDescribeHandler(broker))
    .register(shareFetchCodec, shareFetchHandler(broker))
    .register(shareAcknowledgeCodec, shareAcknowledgeHandler(broker))
    .register(initializeShareGroupStateCodec, initializeShareGroupStateHandler(broker))
    .register(readShareGroupStateCodec, readShareGroupStateHandler(broker))
    .register(writeShareGroupStateCodec, writeShareGroupStateHandler(broker))
    .register(deleteShareGroupStateCodec, deleteShareGroupStateHandler(broker))
    .register(readShareGroupStateSummaryCodec, readShareGroupStateSummaryHandler(broker))
    .register(describeShareGroupOffsetsCodec, describeShareGroupOffsetsHandler(broker))
    .register(alterShareGroupOffsetsCodec, alterShareGroupOffsetsHandler(broker))
    .register(deleteShareGroupOffsetsCodec, deleteShareGroupOffsetsHandler(broker))
    .register(updateFeaturesCodec, updateFeaturesHandler(broker))
}
