/**
 * Where the JWKS validator finds the key that verifies a token's signature (Kafka's
 * CloseableVerificationKeyResolver): a JWKS served over HTTP(S) and refreshed, or a JWKS file.
 * `resolveKey` has jose's key-function shape, so it is handed to jwtVerify as is; it rejects with
 * a message that names the token's `kid` and `alg`, never the token.
 */
import type { FlattenedJWSInput, JSONWebKeySet, JWSHeaderParameters } from 'jose' with { 'resolution-mode': 'import' }
import { loadJose } from './jose.js'

export type VerificationKey = Awaited<ReturnType<Awaited<ReturnType<typeof loadJose>>['importJWK']>>

export interface VerificationKeyResolver {
  /** Loads the keys; rejects when they cannot be had (the broker does not start, as Kafka's). */
  init(): Promise<void>
  resolveKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<VerificationKey>
  close(): void
}

/** The key was not found; the token is refused as `invalid_token`. */
export class UnresolvableKeyError extends Error {
  readonly code = 'UNRESOLVABLE_KEY' as const
  constructor(message: string) {
    super(message)
    this.name = 'UnresolvableKeyError'
  }
}

/** jose's key selection (kid, kty from alg, use, key_ops, crv) over one JWKS. */
export type LocalKeySet = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<VerificationKey>

/** A JWKS document parsed and checked (jose's createLocalJWKSet refuses one without `keys`). */
export async function localKeySet(jwks: unknown): Promise<LocalKeySet> {
  const jose = await loadJose()
  return jose.createLocalJWKSet(jwks as JSONWebKeySet)
}

/** Whether `err` is jose's "no key of this JWKS matches the header". */
export function isNoMatchingKey(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'ERR_JWKS_NO_MATCHING_KEY'
}

/** A short description of a header for messages: only kid and alg, each bounded. */
export function describeHeader(header: JWSHeaderParameters): string {
  const bound = (v: unknown) => JSON.stringify(typeof v === 'string' ? v.slice(0, 100) : (v ?? null))
  return `{"kid":${bound(header.kid)},"alg":${bound(header.alg)}}`
}
