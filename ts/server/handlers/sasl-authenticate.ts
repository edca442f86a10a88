/**
 * SaslAuthenticate reaching the broker: on a listener without SASL, or after the connection
 * authenticated (the authenticator, ts/network/sasl-server-authenticator.ts, takes the ones of an
 * exchange in progress). Kafka's KafkaApis answers ILLEGAL_SASL_STATE with this message.
 */
import type { SaslAuthenticateRequest, SaslAuthenticateResponse } from '../../protocol/apis/sasl-authenticate.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { ApiHandler } from '../kafka-apis.js'

export function saslAuthenticateHandler(): ApiHandler<SaslAuthenticateRequest, SaslAuthenticateResponse> {
  return () => ({
    errorCode: ErrorCode.ILLEGAL_SASL_STATE,
    errorMessage: 'SaslAuthenticate request received after successful authentication',
    authBytes: Buffer.alloc(0),
    sessionLifetimeMs: 0n,
  })
}
