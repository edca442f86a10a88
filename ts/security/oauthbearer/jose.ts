/**
 * The `jose` library (JWS/JWT/JWK, on Node's WebCrypto), loaded once. It is an ES module and
 * ferrolog compiles to CommonJS, so it comes through a dynamic import; every signature check of
 * OAUTHBEARER goes through it (no hand-written cryptography).
 */
export type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } })

let loading: Promise<Jose> | undefined

export function loadJose(): Promise<Jose> {
  return (loading ??= import('jose'))
}
