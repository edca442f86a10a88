/**
 * ShareAcknowledge (KIP-932; Kafka's `handleShareAcknowledgeRequest`): a share group member
 * acknowledges records it acquired, within its share session.
 *
 * READ on the group (GROUP_AUTHORIZATION_FAILED); a group id and member id (INVALID_REQUEST);
 * the session: epoch 0 is INVALID_SHARE_SESSION_EPOCH (a session is opened by ShareFetch only),
 * no session SHARE_SESSION_NOT_FOUND, another epoch than the session's next one
 * INVALID_SHARE_SESSION_EPOCH (all at the top level, nothing changed); -1 acknowledges, then closes
 * the session and releases what the member still holds. Per partition: UNKNOWN_TOPIC_ID,
 * TOPIC_AUTHORIZATION_FAILED, then the share partition's answer (INVALID_REQUEST,
 * INVALID_RECORD_STATE: ts/share/share-partition.ts).
 */
import type { ShareAcknowledgeRequest, ShareAcknowledgeResponse } from '../../protocol/apis/share-acknowledge.js'
import type { ShareAcknowledgeTopicResponse } from '../../protocol/messages/share-acknowledge-response.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { FINAL_EPOCH, INITIAL_EPOCH, nextEpoch } from '../../share/share-session-cache.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { supportsShareGroups } from '../broker-features.js'
import { currentLeader, refreshShareGroupConfig, sharePartitionRef } from './share-request-helper.js'

function topLevelError(errorCode: number, errorMessage: string | null = null): ShareAcknowledgeResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] }
}

export function shareAcknowledgeHandler(broker: BrokerContext): ApiHandler<ShareAcknowledgeRequest, ShareAcknowledgeResponse> {
  const manager = broker.sharePartitionManager
  return async (request, context) => {
    const groupId = request.groupId ?? ''
    const memberId = request.memberId ?? ''
    if (!supportsShareGroups(broker.finalizedFeatures)) return topLevelError(ErrorCode.UNSUPPORTED_VERSION)
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, groupId)) return topLevelError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if (groupId === '' || memberId === '') return topLevelError(ErrorCode.INVALID_REQUEST, 'A share acknowledgement needs a group id and a member id.')
    const config = await refreshShareGroupConfig(broker, groupId)

    const epoch = request.shareSessionEpoch
    if (epoch === INITIAL_EPOCH) return topLevelError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
    const session = manager.sessions.get(groupId, memberId)
    if (session === undefined) return topLevelError(ErrorCode.SHARE_SESSION_NOT_FOUND)
    if (epoch !== FINAL_EPOCH) {
      if (session.epoch !== epoch) return topLevelError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
      session.epoch = nextEpoch(session.epoch)
    }

    const refs = request.topics.map((t) => t.partitions.map((p) => sharePartitionRef(broker, t.topicId, p.partitionIndex)))
    const readable = broker.auth.filterByAuthorized(
      context,
      AclOperation.READ,
      ResourceType.TOPIC,
      refs.flat().flatMap((r) => (r === null ? [] : [r.topic])),
    )
    // Each partition is answered once the share coordinator holds its acknowledgements.
    const responses: ShareAcknowledgeTopicResponse[] = await Promise.all(
      request.topics.map(async (t, ti) => ({
        topicId: t.topicId,
        partitions: await Promise.all(
          t.partitions.map(async (p, pi) => {
            const ref = refs[ti]![pi]!
            const result =
              ref === null
                ? { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: null }
                : !readable.has(ref.topic)
                  ? { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null }
                  : await manager.acknowledge(groupId, memberId, ref, p.acknowledgementBatches)
            return { partitionIndex: p.partitionIndex, errorCode: result.errorCode, errorMessage: result.errorMessage, currentLeader: currentLeader(broker, ref) }
          }),
        ),
      })),
    )
    if (epoch === FINAL_EPOCH) manager.releaseSession(groupId, memberId)
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, acquisitionLockTimeoutMs: config.recordLockDurationMs, responses, nodeEndpoints: [] }
  }
}
