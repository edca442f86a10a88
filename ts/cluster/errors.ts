/** Errors of the cluster metadata layer: each carries the Kafka error code a client would get. */
import { ErrorCode } from '../protocol/error-codes.js'

export class ClusterMetadataError extends Error {
  readonly errorCode: number
  constructor(errorCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ClusterMetadataError'
    this.errorCode = errorCode
  }
}

/** Another live broker is registered with this node.id (Kafka's DuplicateBrokerRegistrationException). */
export class DuplicateBrokerRegistrationError extends ClusterMetadataError {
  constructor(brokerId: number, holder: string) {
    super(
      ErrorCode.DUPLICATE_BROKER_REGISTRATION,
      `node.id ${brokerId} is already registered by another live broker (${holder}); ` + 'two brokers cannot share a node.id: give this one another node.id, or stop the other',
    )
    this.name = 'DuplicateBrokerRegistrationError'
  }
}
