/**
 * The OAuth 2 client credentials grant (RFC 6749 section 4.4), as Kafka's
 * ClientCredentialsJwtRetriever (HttpJwtRetriever with its ClientSecretRequestFormatter) and
 * librdkafka's `sasl.oauthbearer.method=oidc` fetch a token:
 *
 *   POST <token endpoint>                     http: or https:
 *   Authorization: Basic base64(<id>:<secret>)   (each URL-encoded first with urlencodeHeader,
 *                                              Kafka's sasl.oauthbearer.header.urlencode)
 *   Accept: application/json
 *   Cache-Control: no-cache
 *   Content-Type: application/x-www-form-urlencoded
 *
 *   grant_type=client_credentials[&scope=<scope, URL-encoded>]
 *
 * The answer's `access_token` (else `id_token`, as Kafka's JwtResponseParser) is the JWT; what
 * it claims is read by oauth-bearer-login.ts. HTTP 200 and 201 succeed; 400-407, 409-415, 501
 * and 505 are not retried (Kafka's UNRETRYABLE_HTTP_CODES: a wrong secret is answered 401);
 * any other answer or a network fault is retried with exponential backoff from
 * `retryBackoffMs`, for at most `retryBackoffMaxMs` in all (Kafka's Retry:
 * sasl.login.retry.backoff.ms / .max.ms). `connectTimeoutMs` bounds the connection (and TLS),
 * `readTimeoutMs` each wait for the answer (sasl.login.connect.timeout.ms / read.timeout.ms;
 * unset: none, as Java's HttpURLConnection).
 *
 * The client secret is a credential: no error message or log line built here holds it (an
 * answer that echoes it has it masked), nor the token.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'

/** Kafka's HttpJwtRetriever.UNRETRYABLE_HTTP_CODES. */
export const UNRETRYABLE_HTTP_CODES: ReadonlySet<number> = new Set([400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415, 501, 505])
/** The largest token endpoint answer read (a token answer is a few KiB). */
export const TOKEN_RESPONSE_MAX_BYTES = 1024 * 1024
/** How much of an answer an error message quotes (Kafka's JwtResponseParser trims at 1000). */
const QUOTED_MAX_CHARS = 1000

export interface ClientCredentialsOptions {
  tokenEndpointUrl: URL
  clientId: string
  clientSecret: string
  scope?: string
  urlencodeHeader: boolean
  retryBackoffMs: number
  retryBackoffMaxMs: number
  connectTimeoutMs?: number
  readTimeoutMs?: number
  /** For an https: endpoint: the CAs to trust (undefined: Node's roots) and a client certificate. */
  tls?: { ca?: string; cert?: string; key?: string; passphrase?: string; verifyHostname: boolean }
}

/** No token came from the endpoint (Kafka's JwtRetrieverException). */
export class JwtRetrieverError extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'JwtRetrieverError'
  }
}

export class ClientCredentialsJwtRetriever {
  /** Requests made, for tests and metrics. */
  requests = 0

  constructor(private readonly options: ClientCredentialsOptions) {
    if (options.retryBackoffMs < 0 || options.retryBackoffMaxMs < options.retryBackoffMs) throw new RangeError('retryBackoffMaxMs must be at least retryBackoffMs, both non-negative')
  }

  /** A token from the endpoint, retried as the module comment says. */
  async retrieve(): Promise<string> {
    const { retryBackoffMs, retryBackoffMaxMs } = this.options
    const end = Date.now() + retryBackoffMaxMs
    let first: JwtRetrieverError | undefined
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.requestOnce()
      } catch (err) {
        const failure = err instanceof JwtRetrieverError ? err : new JwtRetrieverError(this.mask((err as Error).message), true, { cause: err })
        first ??= failure
        const wait = Math.min(retryBackoffMs * 2 ** (attempt - 1), end - Date.now())
        if (!failure.retriable || wait <= 0) throw failure.retriable ? first : failure
        await new Promise((resolve) => setTimeout(resolve, wait).unref())
      }
    }
  }

  private requestOnce(): Promise<string> {
    this.requests++
    const o = this.options
    const url = o.tokenEndpointUrl
    const encode = (s: string) => (o.urlencodeHeader ? formEncode(s) : s)
    const body = `grant_type=client_credentials${o.scope ? `&scope=${formEncode(o.scope)}` : ''}`
    const headers = {
      Accept: 'application/json',
      Authorization: `Basic ${Buffer.from(`${encode(o.clientId)}:${encode(o.clientSecret)}`, 'utf8').toString('base64')}`,
      'Cache-Control': 'no-cache',
      'Content-Type': 'application/x-www-form-urlencoded',
      'Content-Length': String(Buffer.byteLength(body)),
    }
    const where = `the token endpoint ${url.origin}${url.pathname}`
    return new Promise<string>((resolve, reject) => {
      let req: ClientRequest | undefined
      let connectTimer: NodeJS.Timeout | undefined
      const fail = (message: string, retriable: boolean, cause?: unknown) => {
        clearTimeout(connectTimer)
        req?.destroy()
        reject(new JwtRetrieverError(this.mask(message), retriable, { cause }))
      }
      if (url.protocol === 'https:') {
        const t = o.tls
        req = httpsRequest(url, {
          method: 'POST',
          headers,
          ca: t?.ca,
          cert: t?.cert,
          key: t?.key,
          passphrase: t?.passphrase,
          ...(t && !t.verifyHostname ? { checkServerIdentity: () => undefined } : {}),
        })
      } else {
        req = httpRequest(url, { method: 'POST', headers })
      }
      if (o.connectTimeoutMs !== undefined) {
        connectTimer = setTimeout(() => fail(`${where} was not reached within ${o.connectTimeoutMs} ms (sasl.login.connect.timeout.ms)`, true), o.connectTimeoutMs)
        req.once('socket', (socket) => socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer)))
      }
      if (o.readTimeoutMs !== undefined) req.setTimeout(o.readTimeoutMs, () => fail(`${where} did not answer within ${o.readTimeoutMs} ms (sasl.login.read.timeout.ms)`, true))
      req.once('error', (err) => fail(`${where} could not be reached: ${err.message}`, true, err))
      req.once('response', (res: IncomingMessage) => {
        clearTimeout(connectTimer)
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > TOKEN_RESPONSE_MAX_BYTES) fail(`${where} answered over ${TOKEN_RESPONSE_MAX_BYTES} bytes`, false)
          else chunks.push(chunk)
        })
        res.once('error', (err) => fail(`${where}: ${err.message}`, true, err))
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          const status = res.statusCode ?? 0
          if (status === 200 || status === 201) {
            try {
              resolve(parseJwt(text, where))
            } catch (err) {
              reject(new JwtRetrieverError(this.mask((err as Error).message), false))
            }
            return
          }
          const unretryable = UNRETRYABLE_HTTP_CODES.has(status)
          reject(new JwtRetrieverError(this.mask(`${where} answered HTTP ${status} ${errorOf(text)}${unretryable ? '; will not attempt further retries' : ''}`), !unretryable))
        })
      })
      req.end(body)
    })
  }

  /** The message with the client secret (and its encodings) replaced. */
  private mask(message: string): string {
    const secret = this.options.clientSecret
    if (secret.length < 1) return message
    let out = message
    for (const form of new Set([secret, formEncode(secret), encodeURIComponent(secret)])) out = out.split(form).join('[hidden]')
    return out
  }
}

/** application/x-www-form-urlencoded as Java's URLEncoder (space as '+'). */
function formEncode(s: string): string {
  return new URLSearchParams({ s }).toString().slice(2)
}

/** The JWT of a token answer (Kafka's JwtResponseParser: access_token, else id_token). */
function parseJwt(text: string, where: string): string {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new Error(`${where} answered no JSON: (${quoted(text)})`)
  }
  const obj = json && typeof json === 'object' ? (json as Record<string, unknown>) : {}
  for (const name of ['access_token', 'id_token']) {
    const value = obj[name]
    if (typeof value === 'string' && value.trim() !== '') return value.trim()
  }
  throw new Error(`The token endpoint response did not contain a valid JWT (no access_token) from ${where}`)
}

/** An error answer as Kafka's formatErrorMessage: {error - error_description} (RFC 6749 5.2). */
function errorOf(text: string): string {
  if (text === '') return '{}'
  try {
    const e = JSON.parse(text) as Record<string, unknown>
    if (typeof e.error === 'string') return `{${e.error} - ${typeof e.error_description === 'string' ? e.error_description : ''}}`
    if (typeof e.errorCode === 'string') return `{${e.errorCode} - ${typeof e.errorSummary === 'string' ? e.errorSummary : ''}}`
  } catch {
    // not JSON: quoted below
  }
  return `{${quoted(text)}}`
}

function quoted(text: string): string {
  return text.length > QUOTED_MAX_CHARS ? `${text.slice(0, QUOTED_MAX_CHARS)} (trimmed to first ${QUOTED_MAX_CHARS} characters out of ${text.length} total)` : text
}
