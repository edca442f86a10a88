/**
 * The OAUTHBEARER client's first message (RFC 7628 section 3.1; Kafka's
 * OAuthBearerClientInitialResponse), US-ASCII with \x01 (^A) separators:
 *
 *   gs2-header  ^A  auth=Bearer <token>  ^A  [key=value ^A]...  ^A
 *
 * The GS2 header is `n,,` or `n,a=<authzid>,` (the authzid a SASL name, `,` and `=` written
 * `=2C` and `=3D`). Keys are letters only, values printable ASCII plus space, tab, CR and LF.
 * `auth` is the token's key; every other key is a SASL extension (KIP-342). Kafka's own grammar
 * is matched exactly, so a message Kafka refuses is refused here.
 */

export const SEPARATOR = '\x01'
export const AUTH_KEY = 'auth'

/** A client first message that does not follow the grammar. Its message never holds the token. */
export class OAuthBearerMessageError extends Error {
  readonly code = 'INVALID_OAUTHBEARER_MESSAGE' as const
  constructor(message: string) {
    super(message)
    this.name = 'OAuthBearerMessageError'
  }
}

export interface OAuthBearerClientInitialResponse {
  /** The bearer token (a compact JWS for Kafka's validators). */
  tokenValue: string
  /** The `a=` authorization id of the GS2 header, '' when absent. */
  authorizationId: string
  /** The SASL extensions, `auth` excluded. */
  extensions: ReadonlyMap<string, string>
}

// SASLNAME: any of \x01-\x7F but ',' and '=', or the escapes =2C and =3D.
const SASLNAME = '(?:[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]|=2C|=3D)+'
const KEY = '[A-Za-z]+'
const VALUE = '[\\x21-\\x7E \\t\\r\\n]+'
const KVPAIRS = `(?:${KEY}=${VALUE}${SEPARATOR})*`
const CLIENT_INITIAL_RESPONSE_PATTERN = new RegExp(`^n,(?:a=(${SASLNAME}))?,${SEPARATOR}(${KVPAIRS})${SEPARATOR}$`)
const AUTH_PATTERN = /^(\w+) +([-_~+/.a-zA-Z0-9]+=*)$/
const KEY_PATTERN = new RegExp(`^${KEY}$`)
const VALUE_PATTERN = new RegExp(`^${VALUE}$`)

/** Parses the client's first message; throws OAuthBearerMessageError as Kafka's SaslException. */
export function parseClientInitialResponse(response: Buffer): OAuthBearerClientInitialResponse {
  const match = CLIENT_INITIAL_RESPONSE_PATTERN.exec(response.toString('utf8'))
  if (!match) throw new OAuthBearerMessageError('Invalid OAUTHBEARER client first message')
  const properties = new Map<string, string>()
  const [, authorizationId = '', kvpairs = ''] = match // no authorization id: group 1 is undefined
  for (const pair of kvpairs.split(SEPARATOR)) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    properties.set(pair.slice(0, eq), pair.slice(eq + 1))
  }
  const auth = properties.get(AUTH_KEY)
  if (auth === undefined) throw new OAuthBearerMessageError("Invalid OAUTHBEARER client first message: 'auth' not specified")
  properties.delete(AUTH_KEY)
  const [, scheme, tokenValue] = AUTH_PATTERN.exec(auth) ?? []
  if (scheme === undefined || tokenValue === undefined) throw new OAuthBearerMessageError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
  if (scheme.toLowerCase() !== 'bearer') throw new OAuthBearerMessageError('Invalid scheme in OAUTHBEARER client first message')
  return { tokenValue, authorizationId, extensions: properties }
}

/** The client's first message for `tokenValue` (Kafka's OAuthBearerClientInitialResponse.toBytes). */
export function clientInitialResponseBytes(tokenValue: string, authorizationId = '', extensions: ReadonlyMap<string, string> = new Map()): Buffer {
  for (const [key, value] of extensions) {
    if (key === AUTH_KEY || !KEY_PATTERN.test(key)) throw new OAuthBearerMessageError(`Extension name ${key} is invalid`)
    if (!VALUE_PATTERN.test(value)) throw new OAuthBearerMessageError(`Extension value for extension ${key} is invalid`)
  }
  const ext = [...extensions].map(([k, v]) => `${k}=${v}`).join(SEPARATOR)
  const authzid = authorizationId === '' ? '' : `a=${authorizationId}`
  return Buffer.from(`n,${authzid},${SEPARATOR}auth=Bearer ${tokenValue}${ext === '' ? '' : SEPARATOR + ext}${SEPARATOR}${SEPARATOR}`, 'utf8')
}
