/**
 * An unsecured JWS (RFC 7515 appendix A.5; Kafka's OAuthBearerUnsecuredJws): three base64url
 * parts `header.claims.` with `"alg":"none"` and an empty signature. For tests only: anyone can
 * write one. Claims read as Kafka reads them with Jackson: numbers stay numbers, arrays become
 * lists of their elements' text, anything else becomes text.
 */
import type { OAuthBearerToken } from './oauthbearer-token.js'

/** A token that is not a usable unsecured JWS; `reason` never holds the token. */
export class OAuthBearerIllegalTokenError extends Error {
  readonly code = 'ILLEGAL_TOKEN' as const
  constructor(
    readonly reason: string,
    /** The required scope the token lacks (insufficient_scope), as Kafka's List.toString writes it. */
    readonly failureScope?: string,
  ) {
    super(reason)
    this.name = 'OAuthBearerIllegalTokenError'
  }
}

export type ClaimValue = string | number | string[]

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/

/** Decodes one part as Java's Base64 URL decoder does, strictly (no stray characters). */
function decodePart(part: string): Buffer {
  const bare = part.replace(/=+$/, '')
  if (!BASE64URL.test(part) || bare.length % 4 === 1) throw new OAuthBearerIllegalTokenError('malformed Base64 URL encoded value')
  return Buffer.from(bare, 'base64url')
}

function jacksonText(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value === null) return 'null'
  return ''
}

/** A JSON part as Kafka's OAuthBearerUnsecuredJws.toMap: the object's fields, converted. */
export function toClaimMap(part: string): Map<string, ClaimValue> {
  let json: unknown
  try {
    json = JSON.parse(decodePart(part).toString('utf8'))
  } catch (err) {
    if (err instanceof OAuthBearerIllegalTokenError) throw err
    throw new OAuthBearerIllegalTokenError('malformed JSON')
  }
  const map = new Map<string, ClaimValue>()
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return map
  for (const [key, value] of Object.entries(json)) {
    map.set(key, Array.isArray(value) ? value.map(jacksonText) : typeof value === 'number' ? value : jacksonText(value))
  }
  return map
}

function typeName(value: ClaimValue): string {
  return Array.isArray(value) ? 'List' : typeof value === 'number' ? 'Number' : 'String'
}

export class OAuthBearerUnsecuredJws implements OAuthBearerToken {
  readonly header: ReadonlyMap<string, ClaimValue>
  readonly claims: ReadonlyMap<string, ClaimValue>
  readonly principalName: string
  readonly scope: ReadonlySet<string>
  readonly lifetimeMs: number
  readonly startTimeMs: number | undefined

  constructor(compactSerialization: string, principalClaimName: string, scopeClaimName: string) {
    if (compactSerialization.includes('..')) throw new OAuthBearerIllegalTokenError("Malformed compact serialization contains '..'")
    const splits = compactSerialization.split('.')
    if (splits.length !== 3) throw new OAuthBearerIllegalTokenError('Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values')
    this.header = toClaimMap(splits[0]!)
    this.claims = toClaimMap(splits[1]!)
    const alg = this.header.get('alg')
    if (alg === undefined) throw new OAuthBearerIllegalTokenError('JWS header must have an Algorithm value')
    if (alg !== 'none') throw new OAuthBearerIllegalTokenError("Unsecured JWS must have 'none' for an algorithm")
    if (splits[2] !== '') throw new OAuthBearerIllegalTokenError('Unsecured JWS must not contain a digital signature')
    this.scope = this.calculateScope(scopeClaimName)
    const exp = this.claim('exp', 'Number') as number | undefined
    if (exp === undefined) throw new OAuthBearerIllegalTokenError('No expiration time in JWT')
    this.lifetimeMs = Math.round(exp * 1000)
    const principal = this.claim(principalClaimName, 'String') as string | undefined
    if (principal === undefined || principal.trim() === '') throw new OAuthBearerIllegalTokenError(`No principal name in JWT claim: ${principalClaimName}`)
    this.principalName = principal
    const iat = this.claim('iat', 'Number') as number | undefined
    this.startTimeMs = iat === undefined ? undefined : Math.round(iat * 1000)
  }

  /** The claim, checked to be of `type` when present (Kafka's claim(name, Class)). */
  claim(name: string, type: 'String' | 'Number' | 'List'): ClaimValue | undefined {
    const value = this.claims.get(name)
    if (value === undefined) return undefined
    if (typeName(value) !== type) throw new OAuthBearerIllegalTokenError(`The '${name}' claim was not of type ${type}: ${typeName(value)}`)
    return value
  }

  private calculateScope(scopeClaimName: string): ReadonlySet<string> {
    const value = this.claims.get(scopeClaimName)
    if (typeof value === 'string') return new Set(value.trim() === '' ? [] : [value.trim()])
    const list = this.claim(scopeClaimName, 'List') as string[] | undefined
    return new Set((list ?? []).filter((s) => s.trim() !== '').map((s) => s.trim()))
  }
}
