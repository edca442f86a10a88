/**
 * FindCoordinator (key 10), served v0-v6; v3+ flexible. Up to v3 a request asks for one key and is
 * answered at the top level; from v4 it asks for a batch (KIP-699) and gets one coordinator per
 * key, so a handler answers in the shape of the version asked. v5 (TRANSACTION_ABORTABLE) and v6
 * (share groups) add no fields. The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { findCoordinatorRequestCodec, type FindCoordinatorRequest } from '../messages/find-coordinator-request.js'
import { findCoordinatorResponseCodec, type FindCoordinatorResponse, type Coordinator } from '../messages/find-coordinator-response.js'
import { servedCodec } from './api.js'

export type { FindCoordinatorRequest, FindCoordinatorResponse, Coordinator }

export const findCoordinatorCodec = servedCodec(findCoordinatorRequestCodec, findCoordinatorResponseCodec, 0, 6)

/** The values of keyType. */
export const CoordinatorType = {
  GROUP: 0,
  TRANSACTION: 1,
  SHARE: 2,
} as const
