/**
 * ClientQuotaManager (Kafka's kafka.server class of that name, with its DefaultQuotaCallback):
 * one quota key's enforcement (producer_byte_rate for Produce, consumer_byte_rate for Fetch,
 * request_percentage for every request). Each client's usage is recorded into a rate
 * (sampled-rate.ts) named by its metric tags (user, client-id), which say whose quota it counts
 * against; a usage that takes the rate above the bound answers the time to throttle the client
 * for: (rate - bound) / bound * the rate's window (QuotaUtils.throttleTime), capped for
 * request_percentage at one window (ClientRequestQuotaManager).
 *
 * The quota of a user and client id, the first entity that has this key (quotaLimit):
 *   1. user + client-id   2. user + default client-id   3. user
 *   4. default user + client-id   5. default user + default client-id   6. default user
 *   7. client-id   8. default client-id
 * and the tags mirror it (quotaMetricTags): the rate is shared by all client ids of a user when
 * the match is a user-only entity (3, 6), by all users of a client id when it is a client-id-only
 * one (7, 8), else it is the user's and client id's own.
 *
 * No quota of this key anywhere: nothing is recorded (Kafka's quotasEnabled). Rates idle for an
 * hour are dropped (Kafka's inactive sensor expiration).
 */
import { CLIENT_ID, USER, nameOf } from './client-quota-entity.js'
import type { ClientQuotasImage } from './client-quotas-image.js'
import { QUOTA_WINDOW_NUM, QUOTA_WINDOW_SIZE_SECONDS, REQUEST_PERCENTAGE } from './quota-config.js'
import { SampledRate } from './sampled-rate.js'

const INACTIVE_EXPIRATION_MS = 3600_000
const SWEEP_EVERY = 1024

/** An entity of the user / client-id kind: undefined absent, null the default entity. */
type Name = string | null | undefined
const quotaKeyOf = (user: Name, clientId: Name) => `${user === undefined ? 'u-' : user === null ? 'u*' : 'u=' + user}\0${clientId === undefined ? 'c-' : clientId === null ? 'c*' : 'c=' + clientId}`

export class ClientQuotaManager {
  readonly key: string
  private readonly numSamples: number
  private readonly windowMs: number
  private readonly maxThrottleTimeMs: number
  /** Entity (quotaKeyOf) -> bound, for this key. */
  private overridden = new Map<string, number>()
  private readonly rates = new Map<string, SampledRate>()
  private records = 0

  constructor(key: string, options: { numSamples?: number; windowSizeSeconds?: number } = {}) {
    this.key = key
    this.numSamples = options.numSamples ?? QUOTA_WINDOW_NUM
    this.windowMs = (options.windowSizeSeconds ?? QUOTA_WINDOW_SIZE_SECONDS) * 1000
    this.maxThrottleTimeMs = key === REQUEST_PERCENTAGE ? this.windowMs : Infinity
  }

  /** Follows the stored quotas (every change, as Kafka's ClientQuotaMetadataManager). */
  update(image: ClientQuotasImage): void {
    const next = new Map<string, number>()
    for (const { entity, values } of image.all()) {
      const bound = values.get(this.key)
      if (bound === undefined) continue
      next.set(quotaKeyOf(nameOf(entity, USER), nameOf(entity, CLIENT_ID)), bound)
    }
    this.overridden = next
  }

  /** Any quota of this key: usage is recorded. */
  get quotasEnabled(): boolean {
    return this.overridden.size > 0
  }

  /** Records `value` for the client and answers the ms to throttle it for (0: within its quota). */
  maybeRecordAndGetThrottleTimeMs(user: string, clientId: string, value: number, nowMs: number): number {
    if (!this.quotasEnabled) return 0
    const { tags, bound } = this.resolve(user, clientId)
    const rate = this.rateOf(tags, nowMs)
    rate.record(value, nowMs)
    if (bound === undefined) return 0
    const measured = rate.measure(nowMs)
    if (measured <= bound) return 0
    return Math.min(Math.round(((measured - bound) / bound) * rate.windowSize(nowMs)), this.maxThrottleTimeMs)
  }

  /** Takes back a recorded value (a throttled Fetch answers no records: Kafka's unrecordQuotaSensor). */
  unrecord(user: string, clientId: string, value: number, nowMs: number): void {
    if (!this.quotasEnabled) return
    this.rateOf(this.resolve(user, clientId).tags, nowMs).record(-value, nowMs)
  }

  /** The most that may be recorded at once without a sure throttle (getMaxValueInQuotaWindow). */
  maxValueInQuotaWindow(user: string, clientId: string): number {
    if (!this.quotasEnabled) return Infinity
    const { bound } = this.resolve(user, clientId)
    return bound === undefined ? Infinity : bound * (this.numSamples - 1) * (this.windowMs / 1000)
  }

  /** The quota bound of a user and client id, if any. */
  quotaLimit(user: string, clientId: string): number | undefined {
    return this.resolve(user, clientId).bound
  }

  private resolve(user: string, clientId: string): { tags: string; bound: number | undefined } {
    const q = this.overridden
    const find = (...keys: string[]) => {
      for (const k of keys) {
        const bound = q.get(k)
        if (bound !== undefined) return bound
      }
      return undefined
    }
    const has = (u: Name, c: Name) => q.has(quotaKeyOf(u, c))
    // quotaMetricTags: which entity's rate this client's usage counts in.
    let tagUser = user
    let tagClient = clientId
    if (!has(user, clientId) && !has(user, null)) {
      if (has(user, undefined)) tagClient = ''
      else if (!has(null, clientId) && !has(null, null)) {
        if (has(null, undefined)) tagClient = ''
        else tagUser = ''
      }
    }
    // quotaLimit of those tags.
    let bound: number | undefined
    if (tagUser !== '' && tagClient !== '') bound = find(quotaKeyOf(tagUser, tagClient), quotaKeyOf(tagUser, null), quotaKeyOf(null, tagClient), quotaKeyOf(null, null))
    else if (tagUser !== '') bound = find(quotaKeyOf(tagUser, undefined), quotaKeyOf(null, undefined))
    else if (tagClient !== '') bound = find(quotaKeyOf(undefined, tagClient), quotaKeyOf(undefined, null))
    return { tags: `${tagUser}\0${tagClient}`, bound }
  }

  private rateOf(tags: string, nowMs: number): SampledRate {
    if (++this.records % SWEEP_EVERY === 0) {
      for (const [k, r] of this.rates) if (nowMs - r.lastRecordMs > INACTIVE_EXPIRATION_MS) this.rates.delete(k)
    }
    let rate = this.rates.get(tags)
    if (!rate) this.rates.set(tags, (rate = new SampledRate(this.numSamples, this.windowMs)))
    return rate
  }
}
