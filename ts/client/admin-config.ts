/**
 * The Admin's configuration (Kafka's AdminClientConfig): every option by Kafka's dotted name
 * (`default.api.timeout.ms`) or in camelCase (`defaultApiTimeoutMs`); defaults are Kafka 4's.
 * Unknown names are refused with INVALID_CONFIG. The security settings (security.protocol,
 * ssl.*, sasl.*) are read by client-security.ts into `security` (or `security` is given as a
 * ClientSecurity already read).
 *
 * `default.api.timeout.ms` bounds each Admin call, its retries included; a call's `timeoutMs`
 * option overrides it for that call. `request.timeout.ms` bounds each request of it.
 */
import type { ClientSecurity } from './client-security.js'
import { invalidConfig, readClientOptions } from './client-options.js'

export interface AdminConfig {
  bootstrapServers: string | string[]
  clientId: string
  requestTimeoutMs: number
  defaultApiTimeoutMs: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  reconnectBackoffMs: number
  reconnectBackoffMaxMs: number
  /** TLS and SASL, from security.protocol, ssl.* and sasl.* (client-security.ts). */
  security: ClientSecurity
}

/** What `new Admin(...)` takes: any AdminConfig field by either name. */
export type AdminOptions = { bootstrapServers?: string | string[]; 'bootstrap.servers'?: string | string[]; security?: ClientSecurity } & Record<string, unknown>

type Defaults = Omit<AdminConfig, 'bootstrapServers' | 'security'>

const DEFAULTS: Defaults = {
  clientId: 'ferrolog-admin',
  requestTimeoutMs: 30_000,
  defaultApiTimeoutMs: 60_000,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  reconnectBackoffMs: 50,
  reconnectBackoffMaxMs: 1000,
}

export function adminConfigFrom(options: AdminOptions): AdminConfig {
  const { bootstrapServers, security, given } = readClientOptions(options, true)
  const config: AdminConfig = { ...DEFAULTS, bootstrapServers, security }
  const c = config as unknown as Record<string, unknown>
  for (const [key, [name, value]] of given) {
    if (!(key in DEFAULTS)) throw invalidConfig(name, value, 'not an admin config')
    if (key === 'clientId') {
      if (typeof value !== 'string') throw invalidConfig(name, value, 'a string')
      c[key] = value
      continue
    }
    const n = typeof value === 'string' ? Number(value) : value
    const min = key.endsWith('BackoffMs') || key.endsWith('BackoffMaxMs') ? 0 : 1
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min) throw invalidConfig(name, value, `an integer >= ${min}`)
    c[key] = n
  }
  return config
}
