/**
 * ShareGroupDescribe (key 77, KIP-932), v1 as Kafka 4.4 serves it; flexible: a share group's
 * state, epochs, assignor and members with their assignments. The codecs are generated from
 * Kafka's schemas (ts/protocol/messages).
 */
import { shareGroupDescribeRequestCodec, type ShareGroupDescribeRequest } from '../messages/share-group-describe-request.js'
import {
  shareGroupDescribeResponseCodec,
  type ShareGroupDescribeResponse,
  type DescribedGroup as ShareGroupDescribedGroup,
  type Member as ShareGroupDescribedMember,
} from '../messages/share-group-describe-response.js'
import { servedCodec } from './api.js'

export type { ShareGroupDescribeRequest, ShareGroupDescribeResponse, ShareGroupDescribedGroup, ShareGroupDescribedMember }

export const shareGroupDescribeCodec = servedCodec(shareGroupDescribeRequestCodec, shareGroupDescribeResponseCodec, 1, 1)
