/**
 * Kafka's KafkaShareConsumer (ShareConsumerImpl, KIP-932) for Node: a member of a share group.
 * The group's members share its partitions; the partition's leader hands each record to one
 * member at a time, locked for it (share.record.lock.duration.ms, 30 s by default) until the
 * member settles it or the lock ends; a record released (or whose lock ended) goes to a member
 * again, its delivery count up, until share.delivery.count.limit, when it is archived. A work
 * queue:
 *
 *   const consumer = new ShareConsumer({ bootstrapServers: 'localhost:9092', groupId: 'workers' })
 *   consumer.subscribe(['jobs'])
 *   for await (const record of consumer) await handle(record)   // accepted at the next poll
 *
 * Configuration by Kafka's names or camelCase (share-consumer-config.ts). The pieces:
 * share-membership-manager.ts and share-heartbeat-request-manager.ts (ShareGroupHeartbeat, over
 * the coordinator found as a consumer group's), share-consume-request-manager.ts (ShareFetch and
 * ShareAcknowledge in share sessions, share-session-handler.ts), share-completed-fetch.ts (the
 * records acquired, each with its `deliveryCount`), acknowledgements.ts.
 *
 * Acknowledgement (share.acknowledgement.mode):
 * - implicit (default): every record a poll returned is accepted at the next poll, commitSync,
 *   commitAsync or close. `acknowledge(record)` is refused (ILLEGAL_STATE), as in Java.
 * - explicit: `acknowledge(record, 'accept' | 'release' | 'reject' | 'renew')` for each record of
 *   the last poll; the next poll throws ILLEGAL_STATE while any is not acknowledged. A renewed
 *   record's lock starts again; it stays the application's to settle later.
 * Acknowledgements go with the next ShareFetch to the record's leader, or at once with
 * commitSync()/commitAsync() (ShareAcknowledge). Their outcome per partition goes to the
 * acknowledgement commit callback (Java's AcknowledgementCommitCallback: the partition's offsets
 * and null, or Kafka's error: INVALID_RECORD_STATE when the record was no longer this member's,
 * e.g. its lock had ended), called inside poll, commitSync and close; commitSync also returns
 * them.
 *
 * close(): the implicit acknowledgements are sent, each share session is closed (the broker
 * releases every record the member still holds: those fetched and not yet returned, and those
 * returned but not acknowledged), and the member leaves the group.
 */
import { releaseClientSecurity } from './client-options.js'
import { CoordinatorRequestManager } from './coordinator-request-manager.js'
import { asAcknowledgeType, type AcknowledgeType } from './acknowledgements.js'
import { KafkaClientError } from './errors.js'
import { nativeRecordIndexer } from './fetched-records.js'
import { NetworkClient } from './network-client.js'
import { ShareCompletedFetch, ShareFetchBuffer, type ShareConsumerRecord } from './share-completed-fetch.js'
import { ShareConsumeRequestManager, type AcknowledgementResult } from './share-consume-request-manager.js'
import { shareConsumerConfigFrom, type ShareConsumerConfig, type ShareConsumerOptions } from './share-consumer-config.js'
import { ShareHeartbeatRequestManager } from './share-heartbeat-request-manager.js'
import { ShareMembershipManager } from './share-membership-manager.js'
import { tipKey, type TopicIdPartition } from './share-session-handler.js'

export type { ShareConsumerRecord, AcknowledgementResult, TopicIdPartition }

/** Java's AcknowledgementCommitCallback.onComplete: one partition's acknowledged offsets and its error (null: all settled). */
export type AcknowledgementCommitCallback = (offsets: Map<TopicIdPartition, Set<bigint>>, error: KafkaClientError | null) => void

/** A record of the last poll, and where its acknowledgement goes. */
interface InFlightRecord {
  tp: TopicIdPartition
  nodeId: number
  /** Acknowledged (renew included) since the poll returned it. */
  acknowledged: boolean
}

const recordKey = (topic: string, partition: number, offset: bigint) => `${topic}\u0000${partition}\u0000${offset}`

export class ShareConsumer implements AsyncIterable<ShareConsumerRecord> {
  readonly config: ShareConsumerConfig
  private readonly client: NetworkClient
  private readonly coordinatorClient: NetworkClient
  private readonly membership: ShareMembershipManager
  private readonly heartbeats: ShareHeartbeatRequestManager
  private readonly buffer = new ShareFetchBuffer()
  private readonly requests: ShareConsumeRequestManager
  /** The records the last poll returned. */
  private inFlight = new Map<string, InFlightRecord>()
  /** Records renewed: still the application's to acknowledge after the next poll. */
  private readonly renewed = new Map<string, InFlightRecord>()
  private callback: AcknowledgementCommitCallback | null = null
  private closed = false
  private closing: Promise<void> | null = null

  constructor(options: ShareConsumerOptions) {
    this.config = shareConsumerConfigFrom(options)
    const c = this.config
    const clientOptions = { bootstrapServers: c.bootstrapServers, clientId: c.clientId, requestTimeoutMs: c.requestTimeoutMs, security: c.security }
    this.client = new NetworkClient(clientOptions)
    this.coordinatorClient = new NetworkClient(clientOptions)
    this.membership = new ShareMembershipManager(c.groupId, c.clientRack === '' ? null : c.clientRack)
    this.membership.onChange = () => this.buffer.wakeup()
    const coordinators = new CoordinatorRequestManager(this.coordinatorClient, c.groupId, c.retryBackoffMs)
    this.heartbeats = new ShareHeartbeatRequestManager(this.coordinatorClient, coordinators, this.membership, c.retryBackoffMs, c.retryBackoffMaxMs)
    this.requests = new ShareConsumeRequestManager(this.client, this.membership, this.buffer, c, nativeRecordIndexer())
  }

  /** The member id this consumer has in its share group (a Kafka Uuid). */
  get memberId(): string {
    return this.membership.memberId
  }

  /** The topics subscribed to. */
  subscription(): string[] {
    return [...this.membership.subscription]
  }

  subscribe(topics: string[]): void {
    this.ensureOpen()
    if (topics.length === 0) return void this.unsubscribe()
    if (topics.some((t) => typeof t !== 'string' || t.trim() === '')) throw new KafkaClientError('INVALID_TOPIC_EXCEPTION', 'a topic to subscribe to must be a non-empty name')
    this.membership.subscribe(topics)
  }

  /** Leaves the group (its records go back to it when the share sessions close or their locks end). */
  async unsubscribe(): Promise<void> {
    this.ensureOpen()
    await this.settleImplicit()
    await this.requests.close()
    this.buffer.drain()
    this.inFlight.clear()
    this.renewed.clear()
    await this.heartbeats.leave()
  }

  setAcknowledgementCommitCallback(callback: AcknowledgementCommitCallback | null): void {
    this.callback = callback
  }

  /** The lock duration the broker gave with the last ShareFetch (KIP-1222's acquisitionLockTimeoutMs); undefined before. */
  acquisitionLockTimeoutMs(): number | undefined {
    const ms = this.requests.acquisitionLockTimeoutMs
    return ms > 0 ? ms : undefined
  }

  private ensureOpen(): void {
    if (this.closed || this.closing) throw new KafkaClientError('ILLEGAL_STATE', 'This consumer has already been closed.')
  }

  /**
   * Settles `record` (from the last poll, explicit mode): accept (the default), release, reject
   * or renew. Sent with the next poll's ShareFetch or the next commit.
   */
  acknowledge(record: ShareConsumerRecord, type: AcknowledgeType = 'accept'): void {
    this.ensureOpen()
    if (this.config.shareAcknowledgementMode !== 'explicit') throw new KafkaClientError('ILLEGAL_STATE', 'The record cannot be acknowledged: share.acknowledgement.mode is implicit.')
    const t = asAcknowledgeType(type)
    const key = recordKey(record.topic, record.partition, record.offset)
    const r = this.inFlight.get(key) ?? this.renewed.get(key)
    if (!r)
      throw new KafkaClientError(
        'ILLEGAL_STATE',
        `The record cannot be acknowledged: ${record.topic}-${record.partition} offset ${record.offset} is not one of the last poll's, or was acknowledged already.`,
      )
    if (r.acknowledged && this.inFlight.has(key) && !this.renewed.has(key))
      throw new KafkaClientError('ILLEGAL_STATE', `The record cannot be acknowledged twice: ${record.topic}-${record.partition} offset ${record.offset}.`)
    this.requests.acknowledge(r.nodeId, r.tp, record.offset, t)
    r.acknowledged = true
    if (t === 'renew') this.renewed.set(key, r)
    else this.renewed.delete(key)
  }

  /** Implicit mode: accepts what the last poll returned. Explicit: refuses when some of it is not acknowledged. */
  private async settleImplicit(): Promise<void> {
    if (this.config.shareAcknowledgementMode === 'implicit') {
      for (const [key, r] of this.inFlight) this.requests.acknowledge(r.nodeId, r.tp, BigInt(key.slice(key.lastIndexOf('\u0000') + 1)), 'accept')
      this.inFlight.clear()
    }
  }

  private checkExplicit(): void {
    if (this.config.shareAcknowledgementMode !== 'explicit') return
    for (const r of this.inFlight.values()) if (!r.acknowledged) throw new KafkaClientError('ILLEGAL_STATE', 'All records must be acknowledged in explicit acknowledgement mode.')
    this.inFlight.clear()
  }

  /** Hands the acknowledgement outcomes to the callback; returns them. */
  private deliverResults(): AcknowledgementResult[] {
    const results = this.requests.completed.splice(0)
    if (this.callback) for (const r of results) this.callback(new Map([[r.tp, new Set(r.offsets)]]), r.error)
    return results
  }

  /**
   * Kafka's poll: settles the last poll's records (implicit: accepts them; explicit: throws
   * ILLEGAL_STATE when one is not acknowledged), then waits up to `timeoutMs` for records. At most
   * max.poll.records, of one or more partitions, each with its delivery count.
   */
  async poll(timeoutMs = this.config.defaultApiTimeoutMs): Promise<ShareConsumerRecord[]> {
    this.ensureOpen()
    if (this.membership.subscription.length === 0) throw new KafkaClientError('ILLEGAL_STATE', 'Consumer is not subscribed to any topics.')
    this.checkExplicit()
    await this.settleImplicit()
    const deadline = Date.now() + timeoutMs
    for (;;) {
      this.deliverResults()
      if (this.membership.fatal) throw this.membership.fatal
      const records = this.collect()
      if (records.length > 0) {
        // The acknowledgements so far go with the next fetches (those of leaders whose buffered records are read).
        void this.requests.sendFetches().catch(() => undefined)
        return records
      }
      await this.requests.sendFetches()
      const left = deadline - Date.now()
      if (left <= 0 || this.closed || this.closing) return []
      if (this.buffer.peek() === undefined) await this.buffer.awaitChange(left)
    }
  }

  /** Up to max.poll.records from the buffer; the gaps met are acknowledged on the way. */
  private collect(): ShareConsumerRecord[] {
    const out: ShareConsumerRecord[] = []
    const max = this.config.maxPollRecords
    let fetch: ShareCompletedFetch | undefined
    while (out.length < max && (fetch = this.buffer.peek()) !== undefined) {
      if (!(this.membership.assignment.get(fetch.tp.topicId)?.includes(fetch.tp.partition) ?? false)) {
        // No longer assigned: what was fetched of it goes back to the group.
        for (const r of fetch.fetchRecords(Number.MAX_SAFE_INTEGER)) this.requests.acknowledge(fetch.nodeId, fetch.tp, r.offset, 'release')
        for (const offset of fetch.gaps.splice(0)) this.requests.acknowledge(fetch.nodeId, fetch.tp, offset, 'gap')
        this.buffer.poll()
        continue
      }
      const records = fetch.fetchRecords(max - out.length)
      for (const offset of fetch.gaps.splice(0)) this.requests.acknowledge(fetch.nodeId, fetch.tp, offset, 'gap')
      for (const r of records) {
        this.inFlight.set(recordKey(r.topic, r.partition, r.offset), { tp: fetch.tp, nodeId: fetch.nodeId, acknowledged: false })
        out.push(r)
      }
      if (fetch.isConsumed) this.buffer.poll()
    }
    return out
  }

  /**
   * Sends the acknowledgements made so far (implicit mode: those of the last poll's records) and
   * waits for their outcome, per partition (Java's commitSync: a map to an error or null).
   */
  async commitSync(): Promise<Map<TopicIdPartition, KafkaClientError | null>> {
    this.ensureOpen()
    await this.settleImplicit()
    await this.requests.commit()
    const out = new Map<TopicIdPartition, KafkaClientError | null>()
    const byKey = new Map<string, TopicIdPartition>()
    for (const r of this.deliverResults()) {
      const key = tipKey(r.tp)
      const tp = byKey.get(key) ?? r.tp
      byKey.set(key, tp)
      if (!out.has(tp) || r.error) out.set(tp, r.error ?? out.get(tp) ?? null)
    }
    return out
  }

  /** commitSync without waiting: the outcome reaches the callback at a later poll or commit. */
  commitAsync(): void {
    this.ensureOpen()
    void this.settleImplicit().then(() => this.requests.commit())
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ShareConsumerRecord> {
    while (!this.closed && !this.closing) {
      const records = await this.poll(this.config.fetchMaxWaitMs + 1000)
      for (const r of records) {
        yield r
        if (this.closed || this.closing) return
      }
    }
  }

  /**
   * Closes the consumer: the implicit acknowledgements are sent, the share sessions closed (what
   * the member still holds is released), the member leaves its group. The outcome of the last
   * acknowledgements reaches the callback.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.buffer.wakeup()
      try {
        await this.settleImplicit()
        await this.requests.close()
        this.deliverResults()
        await this.heartbeats.leave()
        this.heartbeats.close()
      } finally {
        this.closed = true
        this.buffer.drain()
        await this.client.close()
        await this.coordinatorClient.close()
        releaseClientSecurity(this.config.security)
      }
    })()
    return this.closing
  }
}
