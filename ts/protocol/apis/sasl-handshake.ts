/**
 * SaslHandshake (key 17), v0-v1; never flexible. The client names its SASL mechanism; the answer
 * lists the mechanisms the listener enables (UNSUPPORTED_SASL_MECHANISM when the one named is not
 * among them).
 *
 * v0 (legacy, KIP-43): after the handshake the client sends the mechanism's tokens as raw
 * size-prefixed frames with no Kafka header, and the broker answers likewise. v1 (KIP-152): the
 * tokens travel in SaslAuthenticate requests. The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { saslHandshakeRequestCodec, type SaslHandshakeRequest } from '../messages/sasl-handshake-request.js'
import { saslHandshakeResponseCodec, type SaslHandshakeResponse } from '../messages/sasl-handshake-response.js'
import { servedCodec } from './api.js'

export type { SaslHandshakeRequest, SaslHandshakeResponse }

export const saslHandshakeCodec = servedCodec(saslHandshakeRequestCodec, saslHandshakeResponseCodec, 0, 1)
