/**
 * AlterUserScramCredentials (key 51, KIP-554), served v0; flexible. Sets users' SCRAM credentials
 * from a salt and a salted password the client computed, or deletes them
 * (kafka-configs.sh --alter --entity-type users --add-config 'SCRAM-SHA-256=[password=...]'). The
 * codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { alterUserScramCredentialsRequestCodec, type AlterUserScramCredentialsRequest } from '../messages/alter-user-scram-credentials-request.js'
import { alterUserScramCredentialsResponseCodec, type AlterUserScramCredentialsResponse } from '../messages/alter-user-scram-credentials-response.js'
import { servedCodec } from './api.js'

export type { AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse }

export const alterUserScramCredentialsCodec = servedCodec(alterUserScramCredentialsRequestCodec, alterUserScramCredentialsResponseCodec, 0, 0)
