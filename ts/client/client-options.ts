/**
 * What every client's config reader shares: Kafka's dotted names or their camelCase, the security
 * settings (client-security.ts) set apart, `bootstrap.servers` required, and the INVALID_CONFIG
 * errors of a value.
 */
import { clientSecurityFrom, closeClientSecurity, securityConfigKey, type ClientSecurity } from './client-security.js'
import { KafkaClientError } from './errors.js'

const camel = (dotted: string) => dotted.replace(/[.-]([a-z])/g, (_, c: string) => c.toUpperCase())

export function invalidConfig(name: string, value: unknown, why: string): KafkaClientError {
  return new KafkaClientError('INVALID_CONFIG', `${name}=${String(value)}: ${why}`)
}

export function asInteger(name: string, value: unknown, min: number): number {
  const n = typeof value === 'string' ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min) throw invalidConfig(name, value, `an integer >= ${min}`)
  return n
}

export function asBoolean(name: string, value: unknown): boolean {
  if (value === true || value === 'true') return true
  if (value === false || value === 'false') return false
  throw invalidConfig(name, value, 'true or false')
}

export interface ClientOptions {
  bootstrapServers: string | string[]
  security: ClientSecurity
  /** The other settings by camelCase name: [the name as given, its value]. */
  given: Map<string, [string, unknown]>
}

/**
 * Splits `options` into bootstrap servers, security and the rest. With `securityObject`, a
 * ready `security` (a ClientSecurity) may stand in for the security settings.
 */
export function readClientOptions(options: object, securityObject: boolean): ClientOptions {
  const given = new Map<string, [string, unknown]>()
  const securityOptions: Record<string, unknown> = {}
  let security: ClientSecurity | undefined
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue
    if (securityObject && key === 'security') {
      security = value as ClientSecurity
      continue
    }
    if (securityConfigKey(key) !== undefined) {
      securityOptions[key] = value
      continue
    }
    given.set(key.includes('.') ? camel(key) : key, [key, value])
  }
  const bootstrap = given.get('bootstrapServers')
  if (!bootstrap) throw new KafkaClientError('INVALID_CONFIG', 'bootstrap.servers is required')
  given.delete('bootstrapServers')
  if (!security) {
    security = clientSecurityFrom(securityOptions)
    readFromOptions.add(security)
  }
  return { bootstrapServers: bootstrap[1] as string | string[], security, given }
}

/** Security a client read from its own options (not a ClientSecurity given ready): the client's to close. */
const readFromOptions = new WeakSet<ClientSecurity>()

/** Closes `security` (its OAuth login) when the client read it from its options; a given one is its owner's. */
export function releaseClientSecurity(security: ClientSecurity): void {
  if (readFromOptions.delete(security)) closeClientSecurity(security)
}
