/**
 * Keeps an expiring credential (an OAuth token) fresh, as Kafka's
 * ExpiringCredentialRefreshingLogin: the first use logs in; from then on a timer logs in again
 * before the credential expires, and every (re-)authentication takes the current one.
 *
 * When to refresh, from now (`relativeToMs`), the credential's start (its `iat`, else now) and
 * expiry (`exp`), with Kafka's sasl.login.refresh.* settings (defaults 0.8, 0.05, 60 s, 300 s):
 *
 *   pct = windowFactor + windowJitter * random()
 *   - remaining lifetime under minPeriod + buffer:  now + (expiry - now) * pct
 *   - else start + (expiry - start) * pct, at the latest `buffer` seconds before expiry and at
 *     the earliest `minPeriod` seconds from now.
 *
 * A credential already expired on arrival (a clock skew) gets no refresh timer, as in Kafka; a
 * failed refresh keeps the credential it had and is tried again 10 s later
 * (DELAY_SECONDS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS). Unlike Kafka, whose client cannot start
 * without a first login, a use that finds no credential or an expired one logs in there and
 * then, so a failure reaches that authentication as its error.
 *
 * The timers are unref'd (they do not hold the process); close() stops them.
 */
import { silentLogger, type Logger } from '../../logger.js'

export interface ExpiringCredential {
  /** The credential (a compact JWS); never logged. */
  readonly value: string
  readonly principalName: string
  /** Its expiry and start (ms since the epoch). */
  readonly expireTimeMs: number
  readonly startTimeMs?: number
}

/** Kafka's ExpiringCredentialRefreshConfig (sasl.login.refresh.*). */
export interface RefreshConfig {
  windowFactor: number
  windowJitter: number
  minPeriodSeconds: number
  bufferSeconds: number
}

export const DEFAULT_REFRESH_CONFIG: RefreshConfig = { windowFactor: 0.8, windowJitter: 0.05, minPeriodSeconds: 60, bufferSeconds: 300 }
export const DELAY_MS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS = 10_000
/** setTimeout's longest delay; a later refresh waits in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** When to refresh `credential` (see the module comment); null: never (already expired). */
export function refreshTimeMs(credential: ExpiringCredential, config: RefreshConfig, relativeToMs: number, random: number): number | null {
  const expireTimeMs = credential.expireTimeMs
  if (relativeToMs > expireTimeMs) return null
  const startMs = credential.startTimeMs ?? relativeToMs
  const pct = config.windowFactor + config.windowJitter * random
  if (relativeToMs + 1000 * (config.minPeriodSeconds + config.bufferSeconds) > expireTimeMs) return relativeToMs + Math.floor((expireTimeMs - relativeToMs) * pct)
  const proposed = startMs + Math.floor((expireTimeMs - startMs) * pct)
  const beginningOfEndBuffer = expireTimeMs - config.bufferSeconds * 1000
  if (proposed > beginningOfEndBuffer) return beginningOfEndBuffer
  const endOfMinRefresh = relativeToMs + 1000 * config.minPeriodSeconds
  return Math.max(proposed, endOfMinRefresh)
}

export class ExpiringCredentialRefreshingLogin {
  private current: ExpiringCredential | undefined
  private loggingIn: Promise<ExpiringCredential> | undefined
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Logins made (the first and each refresh), for tests and metrics. */
  logins = 0

  constructor(
    private readonly login: () => Promise<ExpiringCredential>,
    private readonly config: RefreshConfig = DEFAULT_REFRESH_CONFIG,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** The current credential; logs in when there is none or it has expired. */
  credential(): Promise<ExpiringCredential> {
    if (this.current && this.current.expireTimeMs > Date.now()) return Promise.resolve(this.current)
    return this.logIn()
  }

  close(): void {
    this.closed = true
    clearTimeout(this.timer)
  }

  private logIn(): Promise<ExpiringCredential> {
    this.loggingIn ??= (async () => {
      try {
        this.logins++
        const credential = await this.login()
        this.current = credential
        this.scheduleRefresh(credential)
        return credential
      } finally {
        this.loggingIn = undefined
      }
    })()
    return this.loggingIn
  }

  private scheduleRefresh(credential: ExpiringCredential): void {
    clearTimeout(this.timer)
    if (this.closed) return
    const now = Date.now()
    const at = refreshTimeMs(credential, this.config, now, Math.random())
    if (at === null) {
      this.logger.error(
        `[Principal=${credential.principalName}]: Current clock: ${now} is later than expiry ${credential.expireTimeMs}. This may indicate a clock skew problem. Check that this host's and remote host's clocks are in sync. Not starting refresh thread.`,
      )
      return
    }
    this.logger.info(`[Principal=${credential.principalName}]: Expiring credential re-login sleeping until: ${new Date(at).toISOString()}`)
    this.sleepUntil(at, () => void this.refresh())
  }

  private sleepUntil(at: number, then: () => void): void {
    const wait = at - Date.now()
    this.timer = setTimeout(() => (Date.now() >= at ? then() : this.sleepUntil(at, then)), Math.max(0, Math.min(wait, MAX_TIMER_MS)))
    this.timer.unref()
  }

  private async refresh(): Promise<void> {
    if (this.closed) return
    try {
      await this.logIn()
    } catch (err) {
      if (this.closed) return
      this.logger.warn(`LoginException during login retry; will sleep ${DELAY_MS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS / 1000} seconds before trying again.`, {
        error: (err as Error).message,
      })
      this.sleepUntil(Date.now() + DELAY_MS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS, () => void this.refresh())
    }
  }
}
