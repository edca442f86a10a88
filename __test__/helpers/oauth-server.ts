/**
 * An OAuth 2 authorization server on 127.0.0.1 for OAUTHBEARER tests (node:http, keys and JWTs
 * with `jose`):
 *
 *   POST /token   the client credentials grant (RFC 6749 4.4): the client authenticates by HTTP
 *                 Basic; a known id and secret get an RS256 JWT (sub = the client id, iss, aud,
 *                 scope = the asked scope, iat, exp = iat + lifetimeSeconds) as
 *                 {"access_token", "token_type": "Bearer", "expires_in"}; a wrong secret gets
 *                 401 {"error": "invalid_client"}, another grant 400 unsupported_grant_type.
 *   GET /jwks     the public key (kid k1), for the brokers' JWKS validator.
 *
 * `requests` records each token request (client id, scope, when) for the test to look at.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'

export const ISSUER = 'https://idp.test'
export const AUDIENCE = 'kafka'

export interface TokenRequest {
  clientId: string
  scope: string | undefined
  ok: boolean
  at: number
}

export interface OAuthServer {
  tokenUrl: string
  jwksUrl: string
  requests: TokenRequest[]
  /** The lifetime of the tokens issued from now on. */
  lifetimeSeconds: number
  /** Issued tokens' exp (seconds), by client id, in order. */
  issued: Map<string, number[]>
  close(): void
}

export async function startOAuthServer(clients: Record<string, string>, lifetimeSeconds = 3600): Promise<OAuthServer> {
  const signer = await generateKeyPair('RS256', { extractable: true })
  const keys: JWK[] = [{ ...(await exportJWK(signer.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }]
  const state: OAuthServer = { tokenUrl: '', jwksUrl: '', requests: [], lifetimeSeconds, issued: new Map(), close: () => {} }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body))
        if (req.method === 'GET' && req.url === '/jwks') return json(200, { keys })
        if (req.method !== 'POST' || req.url !== '/token') return json(404, { error: 'not_found' })
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
        const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
        const [id, secret] = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':') : []
        const scope = form.get('scope') ?? undefined
        const ok = id !== undefined && clients[id] !== undefined && clients[id] === secret
        state.requests.push({ clientId: id ?? '', scope, ok, at: Date.now() })
        if (form.get('grant_type') !== 'client_credentials') return json(400, { error: 'unsupported_grant_type', error_description: 'client_credentials only' })
        if (!ok) return json(401, { error: 'invalid_client', error_description: 'Client authentication failed' })
        const iat = Math.floor(Date.now() / 1000)
        const exp = iat + state.lifetimeSeconds
        const token = await new SignJWT({ scope: scope ?? '', iss: ISSUER, aud: AUDIENCE, sub: id })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'JWT' })
          .setIssuedAt(iat)
          .setExpirationTime(exp)
          .sign(signer.privateKey)
        state.issued.set(id!, [...(state.issued.get(id!) ?? []), exp])
        json(200, { access_token: token, token_type: 'Bearer', expires_in: state.lifetimeSeconds })
      })()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  state.tokenUrl = `${base}/token`
  state.jwksUrl = `${base}/jwks`
  state.close = () => {
    server.closeAllConnections()
    server.close()
  }
  return state
}
