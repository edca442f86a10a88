/**
 * A JWKS served over HTTP(S), kept fresh (Kafka's RefreshingHttpsJwks, KIP-768):
 *
 * - `init` fetches it once and rejects when it cannot (the listener then refuses tokens and calls
 *   for a new validator at the next authentication; Kafka's broker does not start).
 * - Every `refreshMs` it is fetched again in the background; a failed refresh retries with
 *   exponential backoff from `retryBackoffMs` for at most `retryBackoffMaxMs`, then keeps the
 *   keys it had.
 * - A token whose `kid` is not in the set asks for an early refresh (`maybeExpediteRefresh`), at
 *   most once a minute per kid (Kafka's MISSING_KEY_ID_CACHE_IN_FLIGHT_MS) for the last 16 kids,
 *   and never for a kid over 1000 characters, so unknown kids cannot make the broker hammer the
 *   identity provider. Only one fetch runs at a time: concurrent refreshes share it.
 *
 * Unlike Kafka, whose first token with a new kid fails while the refresh runs, the caller may wait
 * for the expedited refresh and look again, so a rotated key is accepted on first sight.
 */
import type { Logger } from '../../logger.js'
import { silentLogger } from '../../logger.js'
import { localKeySet, type LocalKeySet } from './verification-key-resolver.js'

/** Kafka's RefreshingHttpsJwks constants. */
export const MISSING_KEY_ID_CACHE_MAX_ENTRIES = 16
export const MISSING_KEY_ID_CACHE_IN_FLIGHT_MS = 60_000
export const MISSING_KEY_ID_MAX_KEY_LENGTH = 1000
/** How long one JWKS request may take (jose4j's Get: 20 s to connect, 20 s to read). */
export const JWKS_FETCH_TIMEOUT_MS = 20_000
/** The largest JWKS document read (a provider's JWKS is a few KiB). */
export const JWKS_MAX_BYTES = 1024 * 1024

export interface RefreshingHttpsJwksOptions {
  refreshMs: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  logger?: Logger
  now?: () => number
}

export class RefreshingHttpsJwks {
  private keys: LocalKeySet | undefined
  private readonly missingKeyIds = new Map<string, number>()
  private inFlight: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private closed = false
  private readonly abort = new AbortController()
  private readonly logger: Logger
  private readonly now: () => number
  /** Fetches made, for tests and metrics. */
  fetches = 0

  constructor(
    readonly location: string,
    private readonly options: RefreshingHttpsJwksOptions,
  ) {
    if (!(options.refreshMs > 0)) throw new RangeError('JWKS validation key refresh configuration value retryWaitMs value must be positive')
    this.logger = options.logger ?? silentLogger
    this.now = options.now ?? Date.now
  }

  async init(): Promise<void> {
    this.keys = await localKeySet(await this.fetchJwks())
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs)
    this.timer.unref()
    this.logger.info('JWKS validation key refresh started', { url: this.location, refreshMs: this.options.refreshMs })
  }

  /** The current keys; init must have resolved. */
  keySet(): LocalKeySet {
    if (!this.keys) throw new Error('Please call init() first')
    return this.keys
  }

  /**
   * Asks for a refresh because `keyId` was not found; resolves when that refresh is done, or
   * undefined when this kid asked less than a minute ago (or is too long to remember).
   */
  maybeExpediteRefresh(keyId: string): Promise<void> | undefined {
    if (keyId.length > MISSING_KEY_ID_MAX_KEY_LENGTH) {
      this.logger.warn('Key ID was too long to cache', { keyIdPrefix: keyId.slice(0, 64), length: keyId.length })
      return undefined
    }
    const now = this.now()
    const next = this.missingKeyIds.get(keyId)
    if (next !== undefined && next > now) return undefined
    this.missingKeyIds.delete(keyId)
    this.missingKeyIds.set(keyId, now + MISSING_KEY_ID_CACHE_IN_FLIGHT_MS)
    while (this.missingKeyIds.size > MISSING_KEY_ID_CACHE_MAX_ENTRIES) this.missingKeyIds.delete(this.missingKeyIds.keys().next().value!)
    return this.refresh()
  }

  /** Fetches the JWKS again (sharing a fetch already running); a failure keeps the old keys. */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.inFlight ??= this.refreshWithRetry().finally(() => (this.inFlight = undefined))
    return this.inFlight
  }

  close(): void {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.abort.abort()
  }

  private async refreshWithRetry(): Promise<void> {
    const { retryBackoffMs, retryBackoffMaxMs } = this.options
    const end = this.now() + retryBackoffMaxMs
    for (let attempt = 1; ; attempt++) {
      try {
        const jwks = await this.fetchJwks()
        this.keys = await localKeySet(jwks)
        for (const key of (jwks as { keys: Array<{ kid?: unknown }> }).keys) if (typeof key.kid === 'string') this.missingKeyIds.delete(key.kid)
        this.logger.debug('OAuth JWKS refresh complete', { url: this.location })
        return
      } catch (err) {
        const wait = Math.min(retryBackoffMs * 2 ** (attempt - 1), end - this.now())
        if (this.closed || wait <= 0) {
          if (!this.closed) this.logger.warn('OAuth JWKS refresh encountered an error; not updating local JWKS cache', { url: this.location, error: (err as Error).message })
          return
        }
        await new Promise((resolve) => setTimeout(resolve, wait).unref())
      }
    }
  }

  private async fetchJwks(): Promise<unknown> {
    this.fetches++
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS)])
    const response = await fetch(this.location, { signal, redirect: 'error', headers: { accept: 'application/json' } })
    if (!response.ok) {
      await response.body?.cancel()
      throw new Error(`JWKS endpoint answered HTTP ${response.status}`)
    }
    const length = Number(response.headers.get('content-length') ?? 0)
    if (length > JWKS_MAX_BYTES) {
      await response.body?.cancel()
      throw new Error(`JWKS document of ${length} bytes is over ${JWKS_MAX_BYTES}`)
    }
    const text = await response.text()
    if (text.length > JWKS_MAX_BYTES) throw new Error(`JWKS document is over ${JWKS_MAX_BYTES} bytes`)
    return JSON.parse(text)
  }
}
