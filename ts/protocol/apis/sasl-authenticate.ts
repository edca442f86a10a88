/**
 * SaslAuthenticate (key 36, KIP-152), v0-v2; v2 is flexible. One SASL token each way (authBytes);
 * v1 adds the session lifetime of KIP-368 (re-authentication): the client must authenticate
 * again on the same connection before it ends. The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { saslAuthenticateRequestCodec, type SaslAuthenticateRequest } from '../messages/sasl-authenticate-request.js'
import { saslAuthenticateResponseCodec, type SaslAuthenticateResponse } from '../messages/sasl-authenticate-response.js'
import { servedCodec } from './api.js'

export type { SaslAuthenticateRequest, SaslAuthenticateResponse }

export const saslAuthenticateCodec = servedCodec(saslAuthenticateRequestCodec, saslAuthenticateResponseCodec, 0, 2)
