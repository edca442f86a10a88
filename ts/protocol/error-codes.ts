/** Kafka's error codes (org.apache.kafka.common.protocol.Errors) that ferrolog returns. */
export const ErrorCode = {
  UNKNOWN_SERVER_ERROR: -1,
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_FETCH_SIZE: 4,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  BROKER_NOT_AVAILABLE: 8,
  REPLICA_NOT_AVAILABLE: 9,
  MESSAGE_TOO_LARGE: 10,
  /** A controller that lost its election wrote (cluster metadata). */
  STALE_CONTROLLER_EPOCH: 11,
  /** A client's: the connection broke with the request in flight. */
  NETWORK_EXCEPTION: 13,
  OFFSET_METADATA_TOO_LARGE: 12,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  INVALID_TOPIC_EXCEPTION: 17,
  RECORD_LIST_TOO_LARGE: 18,
  NOT_ENOUGH_REPLICAS: 19,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 20,
  INVALID_REQUIRED_ACKS: 21,
  ILLEGAL_GENERATION: 22,
  INCONSISTENT_GROUP_PROTOCOL: 23,
  INVALID_GROUP_ID: 24,
  UNKNOWN_MEMBER_ID: 25,
  INVALID_SESSION_TIMEOUT: 26,
  REBALANCE_IN_PROGRESS: 27,
  INVALID_COMMIT_OFFSET_SIZE: 28,
  TOPIC_AUTHORIZATION_FAILED: 29,
  GROUP_AUTHORIZATION_FAILED: 30,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  INVALID_TIMESTAMP: 32,
  UNSUPPORTED_SASL_MECHANISM: 33,
  ILLEGAL_SASL_STATE: 34,
  UNSUPPORTED_VERSION: 35,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  INVALID_REPLICATION_FACTOR: 38,
  INVALID_REPLICA_ASSIGNMENT: 39,
  INVALID_CONFIG: 40,
  NOT_CONTROLLER: 41,
  INVALID_REQUEST: 42,
  UNSUPPORTED_FOR_MESSAGE_FORMAT: 43,
  POLICY_VIOLATION: 44,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TXN_STATE: 48,
  INVALID_PRODUCER_ID_MAPPING: 49,
  INVALID_TRANSACTION_TIMEOUT: 50,
  CONCURRENT_TRANSACTIONS: 51,
  /** A transaction marker from a coordinator older than the one the partition's producer state knows. */
  TRANSACTION_COORDINATOR_FENCED: 52,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  /** An ACL API on a broker without an authorizer. */
  SECURITY_DISABLED: 54,
  /** A batch's other entries, when one failed and the rest were not tried (AddPartitionsToTxn). */
  OPERATION_NOT_ATTEMPTED: 55,
  KAFKA_STORAGE_ERROR: 56,
  /** SaslAuthenticate: the credentials (or the mechanism's token) were refused. */
  SASL_AUTHENTICATION_FAILED: 58,
  UNKNOWN_PRODUCER_ID: 59,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
  FETCH_SESSION_ID_NOT_FOUND: 70,
  INVALID_FETCH_SESSION_EPOCH: 71,
  /** The leader has no endpoint on the listener the client came in on (Metadata). */
  LISTENER_NOT_FOUND: 72,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  UNSUPPORTED_COMPRESSION_TYPE: 76,
  /** AlterPartition from a broker whose registration (broker epoch) is gone: it is fenced. */
  STALE_BROKER_EPOCH: 77,
  MEMBER_ID_REQUIRED: 79,
  GROUP_MAX_SIZE_REACHED: 81,
  FENCED_INSTANCE_ID: 82,
  /** A reassignment cancelled (AlterPartitionReassignments, replicas null) where none is in progress. */
  NO_REASSIGNMENT_IN_PROGRESS: 85,
  GROUP_SUBSCRIBED_TO_TOPIC: 86,
  INVALID_RECORD: 87,
  UNSTABLE_OFFSET_COMMIT: 88,
  /** A transactional producer's epoch is older than its transactional id's (another instance took over). */
  PRODUCER_FENCED: 90,
  /** A SCRAM credential (or other resource) that does not exist. */
  RESOURCE_NOT_FOUND: 91,
  /** A user named twice in one SCRAM credentials request. */
  DUPLICATE_RESOURCE: 92,
  /** A SCRAM credential refused: an empty user, or iterations out of bounds. */
  UNACCEPTABLE_CREDENTIAL: 93,
  INVALID_UPDATE_VERSION: 95,
  UNKNOWN_TOPIC_ID: 100,
  /** Another live broker holds the node.id. */
  DUPLICATE_BROKER_REGISTRATION: 101,
  INCONSISTENT_TOPIC_ID: 103,
  TRANSACTIONAL_ID_NOT_FOUND: 105,
  FETCH_SESSION_TOPIC_ID_ERROR: 106,
  INELIGIBLE_REPLICA: 107,
  NEW_LEADER_ELECTED: 108,
  /** KIP-848: the member's epoch is not the coordinator's; it must give up its partitions and rejoin with epoch 0. */
  FENCED_MEMBER_EPOCH: 110,
  /** KIP-848: a static member joins with an instance id whose previous member has not left yet. */
  UNRELEASED_INSTANCE_ID: 111,
  /** KIP-848: the server-side assignor named is not one of group.consumer.assignors. */
  UNSUPPORTED_ASSIGNOR: 112,
  STALE_MEMBER_EPOCH: 113,
  MISMATCHED_ENDPOINT_TYPE: 114,
  /** KIP-890: the transaction cannot go on and must be aborted (a partition not in it, for a client that knows the code). */
  TRANSACTION_ABORTABLE: 120,
  /** KIP-932: an acknowledgement of records not acquired by this member (or no longer: the lock expired). */
  INVALID_RECORD_STATE: 121,
  /** KIP-932: no share session for this group and member (ShareFetch, ShareAcknowledge). */
  SHARE_SESSION_NOT_FOUND: 122,
  /** KIP-932: a share session epoch that is not the session's next one. */
  INVALID_SHARE_SESSION_EPOCH: 123,
  /** A share coordinator write or initialization with a state epoch older than the one recorded (KIP-932). */
  FENCED_STATE_EPOCH: 124,
  /** KIP-848: a consumer group member's subscribedTopicRegex is not RE2 syntax. */
  INVALID_REGULAR_EXPRESSION: 128,
  /** KIP-932: the broker holds group.share.max.share.sessions share sessions already. */
  SHARE_SESSION_LIMIT_REACHED: 133,
} as const

export type ErrorCodeName = keyof typeof ErrorCode
