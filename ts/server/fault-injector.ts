/**
 * Fault injection for tests (the embedded broker's `broker.inject(rule)`): chosen requests are
 * answered with a Kafka error, answered late, held until released, or their connection closed,
 * so that a client's retries can be tested against a real broker. franz-go's kfake has control
 * hooks of this kind; Kafka's own tests reach into the broker instead.
 *
 * A rule matches a request by ApiKey (name or number), topic, partition and client id (all given
 * must match; a request names a topic or partition when any of its partitions is that one), then
 * takes the next `times` matches, or each match with `probability` (drawn from a generator seeded
 * by `seed`, so a run repeats). The first rule, in the order added, that takes a request acts on
 * it:
 *
 * - `error`: the request is not handled; its answer carries the error the way Kafka returns it
 *   for that ApiKey (error-responses.ts): in each partition for Produce, Fetch, ListOffsets, ...,
 *   the top-level error where the API has one. A Produce with acks=0 gets no answer: its
 *   connection closes instead, as Kafka's broker closes it on an error.
 * - `latencyMs`: the answer (the real one, or the error) goes out that much later.
 * - `hold`: the answer waits until `handle.release()` (or `remove()`, `clearInjections()`).
 * - `close: 'before-handling'` (or `true`): the connection closes and the request is never
 *   handled; `'after-handling'`: it is handled (a record appended), and the connection closes
 *   instead of answering, as when a broker's answer is lost.
 *
 * Requests on one connection are answered in order, one at a time, as Kafka's broker mutes a
 * channel until its request is answered: a held or delayed answer delays those behind it on the
 * same connection, not other connections.
 *
 * Every hit is logged at info level: the rule, the ApiKey, version, correlation id, client id,
 * connection and what was done; never a request's contents.
 *
 * The broker enables it only when started by the embedded API with `faultInjection: true`; a
 * broker started otherwise (the CLI never does) refuses `inject()` with FaultInjectionError.
 */
import type { Logger } from '../logger.js'
import type { Connection } from '../network/connection.js'
import { ApiKey, type ApiKeyName } from '../protocol/apis/api.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { RequestHeader } from '../protocol/header.js'
import { carriesError, errorResponse, hasErrorResponse, requestPartitions } from './error-responses.js'

export type FaultInjectionErrorCode = 'FAULT_INJECTION_DISABLED' | 'INVALID_FAULT_RULE' | 'FAULT_RULE_REMOVED'

/** `inject()` on a broker without fault injection, or a rule that cannot be applied. */
export class FaultInjectionError extends Error {
  readonly code: FaultInjectionErrorCode
  constructor(code: FaultInjectionErrorCode, message: string) {
    super(message)
    this.name = 'FaultInjectionError'
    this.code = code
  }
}

export type KafkaErrorName = keyof typeof ErrorCode

export interface FaultRule {
  /** A name for the log; default `rule-<n>`. */
  name?: string
  /** The ApiKeys it applies to, by name (`'Produce'`) or number; default every one. */
  apiKey?: ApiKeyName | number | Array<ApiKeyName | number>
  /** Requests naming this topic (in any of their partitions). */
  topic?: string
  /** Requests naming this partition (of `topic` when given). */
  partition?: number
  /** Requests whose client id is this, or matches this expression. */
  clientId?: string | RegExp
  /** Takes the next `times` matching requests, then stops (stays listed, `exhausted`). */
  times?: number
  /** Takes each matching request with this probability (0 to 1); default 1. */
  probability?: number
  /** Seeds `probability`'s draws: the same seed takes the same requests of the same sequence. */
  seed?: number
  /** Answers with this Kafka error, by name (`'NOT_LEADER_OR_FOLLOWER'`) or code. Needs `apiKey`. */
  error?: KafkaErrorName | number
  /** Adds this many milliseconds before the answer. */
  latencyMs?: number
  /** Closes the connection: before handling the request (`true`), or after handling it instead of answering. */
  close?: true | 'before-handling' | 'after-handling'
  /** Holds the answer until `release()`. */
  hold?: boolean
}

/** What `inject()` returns: the rule's counts and its undoing. */
export interface FaultHandle {
  readonly name: string
  /** Requests the rule acted on so far. */
  readonly hits: number
  /** Answers held now, waiting for `release()`. */
  readonly held: number
  /** `times` used up. */
  readonly exhausted: boolean
  /**
   * Resolves once the rule has acted on `count` requests (default: one more than now); rejects
   * (FaultInjectionError FAULT_RULE_REMOVED) if the rule is removed first, and at once when
   * `times` makes `count` unreachable.
   */
  whenHit(count?: number): Promise<void>
  /** Sends the answers held so far (later matches are held again). */
  release(): void
  /** Stops the rule and releases what it holds. */
  remove(): void
}

/** What to do with one request, decided before it is handled. */
export interface Fault {
  rule: string
  /** An answer replacing the handler's (undefined: the handler answers; null: no answer). */
  response?: unknown
  closeBefore: boolean
  closeAfter: boolean
  latencyMs: number
  /** Resolves when the held answer may go. */
  hold: Promise<void> | null
}

const API_NAMES = new Map<number, string>(Object.entries(ApiKey).map(([name, key]) => [key, name]))
const ERROR_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]))

/** mulberry32: a small seeded generator, numbers in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

class ActiveRule implements FaultHandle {
  readonly name: string
  readonly apiKeys: Set<number> | null
  readonly errorCode: number | null
  hits = 0
  removed = false
  private readonly random: () => number
  private releases: Array<() => void> = []
  private waiters: Array<{ count: number; resolve: () => void; reject: (err: Error) => void }> = []
  private readonly detach: (rule: ActiveRule) => void

  constructor(
    readonly rule: FaultRule,
    name: string,
    detach: (rule: ActiveRule) => void,
  ) {
    this.name = name
    this.detach = detach
    this.apiKeys = rule.apiKey === undefined ? null : new Set((Array.isArray(rule.apiKey) ? rule.apiKey : [rule.apiKey]).map(apiKeyOf))
    this.errorCode = rule.error === undefined ? null : errorCodeOf(rule.error)
    this.random = seeded(rule.seed ?? (Math.random() * 2 ** 32) >>> 0)
  }

  get held(): number {
    return this.releases.length
  }

  get exhausted(): boolean {
    return this.rule.times !== undefined && this.hits >= this.rule.times
  }

  matches(header: RequestHeader, partitions: () => Array<{ topic: string | null; partition: number | null }>): boolean {
    if (this.removed || this.exhausted) return false
    const r = this.rule
    if (this.apiKeys && !this.apiKeys.has(header.apiKey)) return false
    if (r.clientId !== undefined) {
      const id = header.clientId ?? ''
      if (typeof r.clientId === 'string' ? id !== r.clientId : !r.clientId.test(id)) return false
    }
    if (r.topic !== undefined || r.partition !== undefined) {
      const named = partitions().some((p) => (r.topic === undefined || p.topic === r.topic) && (r.partition === undefined || p.partition === r.partition))
      if (!named) return false
    }
    return r.probability === undefined || this.random() < r.probability
  }

  hit(): void {
    this.hits++
    const ready = this.waiters.filter((w) => this.hits >= w.count)
    this.waiters = this.waiters.filter((w) => this.hits < w.count)
    for (const w of ready) w.resolve()
  }

  holdOne(): Promise<void> {
    return new Promise((resolve) => this.releases.push(resolve))
  }

  whenHit(count = this.hits + 1): Promise<void> {
    if (this.hits >= count) return Promise.resolve()
    if (this.rule.times !== undefined && count > this.rule.times) {
      return Promise.reject(new FaultInjectionError('INVALID_FAULT_RULE', `rule ${this.name} acts on ${this.rule.times} requests, never ${count}`))
    }
    if (this.removed) return Promise.reject(new FaultInjectionError('FAULT_RULE_REMOVED', `rule ${this.name} was removed after ${this.hits} hits`))
    return new Promise((resolve, reject) => this.waiters.push({ count, resolve, reject }))
  }

  release(): void {
    const releases = this.releases
    this.releases = []
    for (const release of releases) release()
  }

  remove(): void {
    this.removed = true
    this.release()
    this.detach(this)
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w.reject(new FaultInjectionError('FAULT_RULE_REMOVED', `rule ${this.name} was removed after ${this.hits} hits`))
  }
}

function apiKeyOf(key: ApiKeyName | number): number {
  if (typeof key === 'number') {
    if (!API_NAMES.has(key)) throw new FaultInjectionError('INVALID_FAULT_RULE', `ApiKey ${key} is not one the broker serves`)
    return key
  }
  const n = (ApiKey as Record<string, number>)[key]
  if (n === undefined) throw new FaultInjectionError('INVALID_FAULT_RULE', `no ApiKey named ${key}`)
  return n
}

function errorCodeOf(error: KafkaErrorName | number): number {
  if (typeof error === 'number') {
    if (!ERROR_NAMES.has(error) || error === ErrorCode.NONE) throw new FaultInjectionError('INVALID_FAULT_RULE', `${error} is not a Kafka error code`)
    return error
  }
  const code = (ErrorCode as Record<string, number>)[error]
  if (code === undefined || code === ErrorCode.NONE) throw new FaultInjectionError('INVALID_FAULT_RULE', `no Kafka error named ${error}`)
  return code
}

function checkRule(rule: FaultRule, apiKeys: Set<number> | null): void {
  const invalid = (why: string) => new FaultInjectionError('INVALID_FAULT_RULE', why)
  const close = rule.close !== undefined
  if (rule.error === undefined && rule.latencyMs === undefined && !close && !rule.hold) throw invalid('a rule needs error, latencyMs, close or hold')
  if (close && (rule.error !== undefined || rule.hold)) throw invalid('close cannot be combined with error or hold')
  if (close && rule.close !== true && rule.close !== 'before-handling' && rule.close !== 'after-handling')
    throw invalid(`close is true, 'before-handling' or 'after-handling', not ${String(rule.close)}`)
  if (rule.times !== undefined && !(Number.isInteger(rule.times) && rule.times > 0)) throw invalid(`times must be a positive integer, not ${rule.times}`)
  if (rule.probability !== undefined && !(rule.probability >= 0 && rule.probability <= 1)) throw invalid(`probability must be between 0 and 1, not ${rule.probability}`)
  if (rule.latencyMs !== undefined && !(Number.isFinite(rule.latencyMs) && rule.latencyMs >= 0)) throw invalid(`latencyMs must be a non-negative number, not ${rule.latencyMs}`)
  if (rule.partition !== undefined && !(Number.isInteger(rule.partition) && rule.partition >= 0)) throw invalid(`partition must be a non-negative integer, not ${rule.partition}`)
  if (rule.error !== undefined) {
    if (apiKeys === null) throw invalid('an error needs apiKey: where the error goes in the answer depends on the API')
    for (const key of apiKeys) if (!hasErrorResponse(key)) throw invalid(`${API_NAMES.get(key)} responses have no place for an error`)
  }
}

export class FaultInjector {
  private rules: ActiveRule[] = []
  private next = 0
  private readonly logger: Logger
  /** A topic's name from its id (requests naming topics by id). */
  private readonly topicName: (topicId: Buffer) => string | undefined

  constructor(logger: Logger, topicName: (topicId: Buffer) => string | undefined) {
    this.logger = logger
    this.topicName = topicName
  }

  inject(rule: FaultRule): FaultHandle {
    const name = rule.name ?? `rule-${++this.next}`
    const active = new ActiveRule({ ...rule }, name, (r) => {
      this.rules = this.rules.filter((x) => x !== r)
    })
    checkRule(rule, active.apiKeys)
    this.rules.push(active)
    this.logger.info('fault injection rule added', { rule: name, ...describeRule(rule) })
    return active
  }

  /** Removes every rule and releases every held answer. */
  clear(): void {
    const rules = this.rules
    this.rules = []
    for (const rule of rules) rule.remove()
    if (rules.length > 0) this.logger.info('fault injection rules cleared', { rules: rules.map((r) => r.name) })
  }

  get active(): number {
    return this.rules.length
  }

  /** The fault for one decoded request, or null: most requests meet no rule. */
  faultFor(header: RequestHeader, request: unknown, connection: Connection): Fault | null {
    if (this.rules.length === 0) return null
    let partitions: Array<{ topic: string | null; partition: number | null }> | undefined
    const named = () =>
      (partitions ??= requestPartitions(header.apiKey, request).map((p) => ({
        topic: p.topic ?? (p.topicId ? (this.topicName(p.topicId) ?? null) : null),
        partition: p.partition,
      })))
    for (const rule of this.rules) {
      if (!rule.matches(header, named)) continue
      const r = rule.rule
      let response: unknown
      if (rule.errorCode !== null) {
        response = errorResponse(header.apiKey, header.apiVersion, request, rule.errorCode)
        if (response !== null && !carriesError(header.apiKey, header.apiVersion, response, rule.errorCode)) {
          this.logger.warn('fault injection: this version of the API cannot carry the error; the request is handled', {
            rule: rule.name,
            api: API_NAMES.get(header.apiKey),
            version: header.apiVersion,
            error: ERROR_NAMES.get(rule.errorCode),
          })
          continue
        }
      }
      rule.hit()
      // An error for a request that gets no answer (Produce acks=0): Kafka closes the connection
      // instead, the one sign such a client gets.
      const unanswerable = rule.errorCode !== null && response === null
      const fault: Fault = {
        rule: rule.name,
        response,
        closeBefore: r.close === true || r.close === 'before-handling' || unanswerable,
        closeAfter: r.close === 'after-handling',
        latencyMs: r.latencyMs ?? 0,
        hold: r.hold ? rule.holdOne() : null,
      }
      this.logger.info('fault injected', {
        rule: rule.name,
        api: API_NAMES.get(header.apiKey),
        version: header.apiVersion,
        correlationId: header.correlationId,
        clientId: header.clientId,
        connection: connection.id,
        ...(rule.errorCode !== null ? { error: ERROR_NAMES.get(rule.errorCode) } : {}),
        ...(fault.latencyMs > 0 ? { latencyMs: fault.latencyMs } : {}),
        ...(r.close !== undefined || unanswerable ? { close: fault.closeBefore ? 'before-handling' : 'after-handling' } : {}),
        ...(r.hold ? { hold: true } : {}),
        ...(partitions !== undefined ? { partitions: partitions.map((p) => `${p.topic ?? '?'}${p.partition === null ? '' : `-${p.partition}`}`) } : {}),
      })
      return fault
    }
    return null
  }
}

function describeRule(rule: FaultRule): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(rule)) {
    if (key === 'name' || value === undefined) continue
    out[key] = value instanceof RegExp ? String(value) : value
  }
  return out
}
