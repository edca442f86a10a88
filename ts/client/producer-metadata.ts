/**
 * Kafka's ProducerMetadata: the topics the producer sends to, and their partitions and leaders
 * (the client's Metadata, metadata.ts), refreshed for those topics only, one request at a time, at
 * most every retry.backoff.ms, when a send or the Sender asks (a topic not known yet, a leader
 * lost) and every metadata.max.age.ms. Metadata is asked for with allowAutoTopicCreation, as
 * Kafka's producer does: a broker with auto.create.topics.enable creates the topic.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import { KafkaClientError } from './errors.js'
import type { NetworkClient } from './network-client.js'

/** Kafka's AuthenticationException errors among the client's codes. */
const AUTHENTICATION_ERRORS: ReadonlySet<string> = new Set(['SASL_AUTHENTICATION_FAILED', 'SSL_HANDSHAKE_FAILED', 'UNSUPPORTED_SASL_MECHANISM', 'ILLEGAL_SASL_STATE'])

export interface TopicPartitions {
  numPartitions: number
  /** The partitions with a leader. */
  available: number[]
}

export class ProducerMetadata {
  private readonly topics = new Set<string>()
  private refreshing: Promise<void> | null = null
  private lastRefreshMs = 0
  private timer: NodeJS.Timeout | null = null
  private cache = new Map<string, TopicPartitions>()
  private cacheVersion = -1
  private closed = false
  /** The last refresh's failure (a broker unreachable), for the errors of sends that time out. */
  lastError: KafkaClientError | null = null

  constructor(
    private readonly client: NetworkClient,
    private readonly options: { retryBackoffMs: number; metadataMaxAgeMs: number },
    private readonly onUpdate: () => void,
  ) {}

  /** The partitions of `topic`, or undefined when the metadata does not have it (yet). */
  partitionsFor(topic: string): TopicPartitions | undefined {
    const md = this.client.metadata
    if (this.cacheVersion !== md.updateVersion) {
      this.cache.clear()
      this.cacheVersion = md.updateVersion
    }
    let info = this.cache.get(topic)
    if (info !== undefined) return info
    const t = md.topic(topic)
    if (t === undefined || t.errorCode !== ErrorCode.NONE || t.partitions.length === 0) return undefined
    info = { numPartitions: t.partitions.length, available: t.partitions.filter((p) => p.leaderId >= 0).map((p) => p.partition) }
    this.cache.set(topic, info)
    return info
  }

  /** A topic error that waiting will not cure (INVALID_TOPIC_EXCEPTION, TOPIC_AUTHORIZATION_FAILED), if any. */
  fatalTopicError(topic: string): KafkaClientError | undefined {
    const t = this.client.metadata.topic(topic)
    if (t === undefined || t.errorCode === ErrorCode.NONE) return undefined
    const err = KafkaClientError.fromErrorCode(t.errorCode, `topic ${topic}`)
    return err.retriable || t.errorCode === ErrorCode.LEADER_NOT_AVAILABLE ? undefined : err
  }

  /**
   * The last refresh's authentication failure (SASL, TLS), which waiting will not cure: as Kafka's
   * Metadata.fatalError, sends waiting for metadata fail with it at once.
   */
  fatalError(): KafkaClientError | undefined {
    const err = this.lastError
    return err !== null && AUTHENTICATION_ERRORS.has(err.code) ? err : undefined
  }

  /** Sends to `topic` will follow: keep its metadata. */
  add(topic: string): void {
    if (this.topics.has(topic)) return
    this.topics.add(topic)
    this.requestUpdate()
  }

  /** Asks for fresh metadata (now, or once retry.backoff.ms passed since the last request). */
  requestUpdate(): void {
    if (this.refreshing !== null || this.timer !== null || this.closed) return
    const wait = this.lastRefreshMs + this.options.retryBackoffMs - Date.now()
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = null
        this.requestUpdate()
      }, wait)
      return
    }
    this.lastRefreshMs = Date.now()
    this.refreshing = this.client
      .refreshMetadata([...this.topics], { allowAutoTopicCreation: true })
      .then(
        () => {
          this.lastError = null
        },
        (err: unknown) => {
          this.lastError = err instanceof KafkaClientError ? err : new KafkaClientError('NETWORK_EXCEPTION', String(err))
        },
      )
      .finally(() => {
        this.refreshing = null
        if (!this.closed) this.onUpdate()
      })
  }

  /** Whether metadata.max.age.ms passed since the last refresh. */
  maybeExpire(nowMs: number): void {
    if (nowMs - this.lastRefreshMs >= this.options.metadataMaxAgeMs && this.topics.size > 0) this.requestUpdate()
  }

  close(): void {
    this.closed = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }
}
