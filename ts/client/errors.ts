/**
 * The client's errors. Each has a `code`: the name of Kafka's error (ts/protocol/error-codes.ts)
 * when a broker answered one, or a client-side code (Kafka's exception of the same meaning in
 * brackets) when the fault is on the way to the broker:
 *
 *   NETWORK_EXCEPTION        the connection failed or closed with the request in flight (DisconnectException)
 *   REQUEST_TIMED_OUT        no response within the request's timeout (TimeoutException; Kafka's code 7)
 *   UNSUPPORTED_VERSION      the node serves no version of the ApiKey this client speaks (UnsupportedVersionException)
 *   CONNECTION_REFUSED       the node could not be reached (a connect failure; retried with backoff)
 *   CLIENT_CLOSED            the NetworkClient was closed
 *   INVALID_RESPONSE         a response that does not decode or answers the wrong request
 *   SSL_HANDSHAKE_FAILED     TLS failed: the broker's certificate is not trusted or does not name
 *                            the host, or the broker refused ours (SslAuthenticationException)
 *   TRANSACTION_ABORTED      a record of a transaction aborted before it was sent (TransactionAbortedException)
 *   ILLEGAL_STATE            a call the client's state does not allow, e.g. commitTransaction
 *                            outside a transaction or send after close (IllegalStateException)
 *
 * Authentication failures (SSL_HANDSHAKE_FAILED, SASL_AUTHENTICATION_FAILED,
 * UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE) are not retriable: as Kafka's
 * AuthenticationException, they reach the caller instead of being retried.
 *
 * `errorCode` is Kafka's numeric code where one exists (-1 UNKNOWN_SERVER_ERROR otherwise), so a
 * caller can act on `err.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER` as a Java client does.
 * `retriable` says whether the same request may succeed later (Kafka's RetriableException).
 */
import { ErrorCode, type ErrorCodeName } from '../protocol/error-codes.js'

export type ClientErrorCode = ErrorCodeName | 'CONNECTION_REFUSED' | 'CLIENT_CLOSED' | 'INVALID_RESPONSE' | 'SSL_HANDSHAKE_FAILED' | 'ILLEGAL_STATE' | 'TRANSACTION_ABORTED'

const NAMES = new Map<number, ErrorCodeName>(Object.entries(ErrorCode).map(([name, code]) => [code, name as ErrorCodeName]))

/** Kafka's name for an error code ("error 99" for one this package does not name). */
export function errorName(errorCode: number): string {
  return NAMES.get(errorCode) ?? `error ${errorCode}`
}

/** Kafka's retriable errors (RetriableException subclasses) among those the client meets. */
const RETRIABLE = new Set<number>([
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NETWORK_EXCEPTION,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  // A Produce v12 adding its partition to a transaction still ending (transaction version 2).
  ErrorCode.CONCURRENT_TRANSACTIONS,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
  ErrorCode.INVALID_FETCH_SESSION_EPOCH,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INCONSISTENT_TOPIC_ID,
  ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
])

const CLIENT_CODES: Record<Exclude<ClientErrorCode, ErrorCodeName>, number> = {
  CONNECTION_REFUSED: ErrorCode.NETWORK_EXCEPTION,
  CLIENT_CLOSED: ErrorCode.UNKNOWN_SERVER_ERROR,
  INVALID_RESPONSE: ErrorCode.UNKNOWN_SERVER_ERROR,
  SSL_HANDSHAKE_FAILED: ErrorCode.UNKNOWN_SERVER_ERROR,
  ILLEGAL_STATE: ErrorCode.UNKNOWN_SERVER_ERROR,
  TRANSACTION_ABORTED: ErrorCode.UNKNOWN_SERVER_ERROR,
}

export class KafkaClientError extends Error {
  readonly code: ClientErrorCode
  /** Kafka's numeric error code. */
  readonly errorCode: number
  readonly retriable: boolean

  constructor(code: ClientErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'KafkaClientError'
    this.code = code
    this.errorCode = code in CLIENT_CODES ? CLIENT_CODES[code as keyof typeof CLIENT_CODES] : ErrorCode[code as ErrorCodeName]
    this.retriable = code === 'CONNECTION_REFUSED' || RETRIABLE.has(this.errorCode)
  }

  /** The error a broker answered with `errorCode` (and its message, if any) for `what`. */
  static fromErrorCode(errorCode: number, what: string, message?: string | null): KafkaClientError {
    const name = NAMES.get(errorCode)
    const text = `${what}: ${errorName(errorCode)}${message ? ` (${message})` : ''}`
    const err = new KafkaClientError(name ?? 'UNKNOWN_SERVER_ERROR', text)
    if (!name) Object.defineProperty(err, 'errorCode', { value: errorCode })
    return err
  }
}

/** Whether `errorCode` is one Kafka's clients retry (after refreshing metadata where it says so). */
export function isRetriable(errorCode: number): boolean {
  return RETRIABLE.has(errorCode)
}

/**
 * A commit the group refused because this member's generation is over (Kafka's
 * CommitFailedException, and RebalanceInProgressException for REBALANCE_IN_PROGRESS): `code` is
 * ILLEGAL_GENERATION (also when the consumer, having left the group, did not send it),
 * UNKNOWN_MEMBER_ID or REBALANCE_IN_PROGRESS; with group.protocol=consumer (KIP-848)
 * UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH (the member's epoch moved on). The partitions may belong
 * to another member by now; the next poll() rejoins. Not retriable as such: the records since the last commit may be
 * read again by whoever owns the partitions next.
 */
export type CommitFailedCode = 'ILLEGAL_GENERATION' | 'UNKNOWN_MEMBER_ID' | 'REBALANCE_IN_PROGRESS' | 'STALE_MEMBER_EPOCH'

export class CommitFailedError extends KafkaClientError {
  constructor(code: CommitFailedCode, message: string) {
    super(code, message)
    this.name = 'CommitFailedError'
  }

  static override fromErrorCode(errorCode: number, what: string, message?: string | null): CommitFailedError {
    const name = NAMES.get(errorCode) as CommitFailedCode
    return new CommitFailedError(name, `${what}: ${errorName(errorCode)}${message ? ` (${message})` : ''}`)
  }
}

/**
 * A record the producer cannot send because of its size (Kafka's RecordTooLargeException, error
 * MESSAGE_TOO_LARGE, 10): larger than max.request.size or buffer.memory once serialized (refused
 * by `send`), or alone in a batch the broker refused as larger than its message.max.bytes. Only
 * that record fails.
 */
export class RecordTooLargeError extends KafkaClientError {
  constructor(message: string) {
    super('MESSAGE_TOO_LARGE', message)
    this.name = 'RecordTooLargeError'
  }
}
