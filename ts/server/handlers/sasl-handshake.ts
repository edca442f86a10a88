/**
 * SaslHandshake reaching the broker: on a listener without SASL, or on a SASL connection already
 * authenticated that is not starting a re-authentication (the authenticator,
 * ts/network/sasl-server-authenticator.ts, answers the handshakes it serves before the broker sees
 * them). Kafka's KafkaApis answers ILLEGAL_SASL_STATE with no mechanisms; so does ferrolog.
 */
import type { SaslHandshakeRequest, SaslHandshakeResponse } from '../../protocol/apis/sasl-handshake.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { ApiHandler } from '../kafka-apis.js'

export function saslHandshakeHandler(): ApiHandler<SaslHandshakeRequest, SaslHandshakeResponse> {
  return () => ({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] })
}
