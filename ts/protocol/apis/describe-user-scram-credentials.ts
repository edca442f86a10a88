/**
 * DescribeUserScramCredentials (key 50, KIP-554), served v0; flexible. Each user's SCRAM
 * mechanisms and iteration counts (kafka-configs.sh --describe --entity-type users). The codecs
 * are generated from Kafka's schemas (ts/protocol/messages); this module names the versions the
 * broker serves.
 */
import { describeUserScramCredentialsRequestCodec, type DescribeUserScramCredentialsRequest } from '../messages/describe-user-scram-credentials-request.js'
import { describeUserScramCredentialsResponseCodec, type DescribeUserScramCredentialsResponse } from '../messages/describe-user-scram-credentials-response.js'
import { servedCodec } from './api.js'

export type { DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse }

export const describeUserScramCredentialsCodec = servedCodec(describeUserScramCredentialsRequestCodec, describeUserScramCredentialsResponseCodec, 0, 0)
