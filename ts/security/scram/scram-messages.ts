/**
 * The four SCRAM messages of RFC 5802 section 7 (Kafka's ScramMessages), parsed and written as
 * the broker sees them:
 *
 *   client-first  gs2-header client-first-message-bare
 *                 gs2-header = "n," [ "a=" saslname ] ","        (only "n": no channel binding)
 *                 client-first-message-bare = "n=" saslname ",r=" c-nonce ["," extensions]
 *   server-first  "r=" c-nonce s-nonce ",s=" base64(salt) ",i=" iteration-count
 *   client-final  "c=" base64(gs2-header) ",r=" nonce ["," extensions] ",p=" base64(proof)
 *   server-final  "v=" base64(ServerSignature)
 *
 * The client's side (Kafka's ScramSaslClient) writes the client messages and parses the server's
 * with the same module: `formatClientFirstMessage`, `parseServerFirstMessage`,
 * `formatClientFinalMessageWithoutProof`, `parseServerFinalMessage`.
 *
 * Extensions are `name=value` with an alphabetic name (Kafka's `tokenauth=true` asks for
 * delegation-token authentication). The AuthMessage is built from the texts as received, so an
 * extension is signed exactly as the client sent it. A message that does not parse is a
 * ScramMessageError; its message names what is wrong and never repeats the client's bytes.
 */

export class ScramMessageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ScramMessageError'
  }
}

export interface ClientFirstMessage {
  /** `n,,` or `n,a=<saslname>,`: what the client-final's `c=` must carry. */
  readonly gs2Header: string
  /** The saslname of the gs2 header's `a=`, or '' when none was given. */
  readonly authorizationId: string
  /** The user's saslname as sent (`=2C`/`=3D` escaped). */
  readonly saslName: string
  readonly nonce: string
  /** The extensions after the nonce, in order. */
  readonly extensions: ReadonlyMap<string, string>
  readonly clientFirstMessageBare: string
}

export interface ClientFinalMessage {
  readonly channelBinding: Buffer
  readonly nonce: string
  readonly proof: Buffer
  readonly clientFinalMessageWithoutProof: string
}

const SASLNAME = /^(?:[^=,]|=2C|=3D)+$/
/** RFC 5802's printable: %x21-2B / %x2D-7E (no comma). */
const PRINTABLE = /^[\x21-\x2B\x2D-\x7E]+$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const EXTENSION = /^([A-Za-z]+)=([^,]+)$/

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The message as text: valid UTF-8 without NUL (RFC 5802: UTF8-char excluding NUL). */
function text(bytes: Buffer, what: string): string {
  let s: string
  try {
    s = utf8.decode(bytes)
  } catch {
    throw new ScramMessageError(`Invalid SCRAM ${what} message: not UTF-8`)
  }
  if (s.includes('\0')) throw new ScramMessageError(`Invalid SCRAM ${what} message: NUL character`)
  return s
}

function base64(value: string, what: string): Buffer {
  if (!BASE64.test(value)) throw new ScramMessageError(`Invalid SCRAM client final message: ${what} is not base64`)
  return Buffer.from(value, 'base64')
}

function extensions(parts: readonly string[], what: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of parts) {
    const [, key, value] = EXTENSION.exec(part) ?? []
    if (key === undefined || value === undefined) throw new ScramMessageError(`Invalid SCRAM ${what} message: malformed extension`)
    out.set(key, value)
  }
  return out
}

export function parseClientFirstMessage(bytes: Buffer): ClientFirstMessage {
  const what = 'client first'
  const message = text(bytes, what)
  if (message.startsWith('p=') || message.startsWith('y,')) {
    throw new ScramMessageError('Invalid SCRAM client first message: channel binding is not supported (gs2 header must be "n")')
  }
  if (!message.startsWith('n,')) throw new ScramMessageError('Invalid SCRAM client first message: gs2 header must start with "n,"')
  const authzEnd = message.indexOf(',', 2)
  if (authzEnd < 0) throw new ScramMessageError('Invalid SCRAM client first message: incomplete gs2 header')
  const authz = message.slice(2, authzEnd)
  let authorizationId = ''
  if (authz.length > 0) {
    if (!authz.startsWith('a=') || !SASLNAME.test(authz.slice(2))) throw new ScramMessageError('Invalid SCRAM client first message: malformed authorization id')
    authorizationId = authz.slice(2)
  }
  const gs2Header = message.slice(0, authzEnd + 1)
  const clientFirstMessageBare = message.slice(authzEnd + 1)
  const [userPart = '', noncePart, ...extensionParts] = clientFirstMessageBare.split(',')
  if (userPart.startsWith('m=')) throw new ScramMessageError('Invalid SCRAM client first message: mandatory extensions are not supported')
  if (noncePart === undefined || !userPart.startsWith('n=') || !noncePart.startsWith('r=')) {
    throw new ScramMessageError('Invalid SCRAM client first message: expected n=<user>,r=<nonce>')
  }
  const saslName = userPart.slice(2)
  if (!SASLNAME.test(saslName)) throw new ScramMessageError('Invalid SCRAM client first message: malformed user name')
  const nonce = noncePart.slice(2)
  if (!PRINTABLE.test(nonce)) throw new ScramMessageError('Invalid SCRAM client first message: malformed nonce')
  return { gs2Header, authorizationId, saslName, nonce, extensions: extensions(extensionParts, what), clientFirstMessageBare }
}

export function formatServerFirstMessage(nonce: string, salt: Buffer, iterations: number): string {
  return `r=${nonce},s=${salt.toString('base64')},i=${iterations}`
}

export function parseClientFinalMessage(bytes: Buffer): ClientFinalMessage {
  const what = 'client final'
  const message = text(bytes, what)
  const proofAt = message.lastIndexOf(',p=')
  if (proofAt < 0) throw new ScramMessageError('Invalid SCRAM client final message: no proof')
  const clientFinalMessageWithoutProof = message.slice(0, proofAt)
  const [bindingPart = '', noncePart, ...extensionParts] = clientFinalMessageWithoutProof.split(',')
  if (noncePart === undefined || !bindingPart.startsWith('c=') || !noncePart.startsWith('r=')) {
    throw new ScramMessageError('Invalid SCRAM client final message: expected c=<binding>,r=<nonce>')
  }
  const nonce = noncePart.slice(2)
  if (!PRINTABLE.test(nonce)) throw new ScramMessageError('Invalid SCRAM client final message: malformed nonce')
  extensions(extensionParts, what)
  return {
    channelBinding: base64(bindingPart.slice(2), 'the channel binding'),
    nonce,
    proof: base64(message.slice(proofAt + 3), 'the proof'),
    clientFinalMessageWithoutProof,
  }
}

export function formatServerFinalMessage(serverSignature: Buffer): string {
  return `v=${serverSignature.toString('base64')}`
}

export interface ServerFirstMessage {
  /** The client's nonce followed by the server's. */
  readonly nonce: string
  readonly salt: Buffer
  readonly iterations: number
}

/** The server-final: the server's signature, or the error it sent (`e=`). */
export type ServerFinalMessage = { readonly serverSignature: Buffer; readonly error?: undefined } | { readonly error: string; readonly serverSignature?: undefined }

/** `n,,n=<saslname>,r=<nonce>`: the gs2 header without channel binding nor authorization id, then the bare message. */
export function formatClientFirstMessage(saslName: string, nonce: string): { message: string; clientFirstMessageBare: string } {
  const clientFirstMessageBare = `n=${saslName},r=${nonce}`
  return { message: `n,,${clientFirstMessageBare}`, clientFirstMessageBare }
}

/** `c=biws,r=<nonce>`: the client-final before its proof (biws is base64 of the gs2 header `n,,`). */
export function formatClientFinalMessageWithoutProof(nonce: string): string {
  return `c=${Buffer.from('n,,').toString('base64')},r=${nonce}`
}

export function formatClientFinalMessage(clientFinalMessageWithoutProof: string, proof: Buffer): string {
  return `${clientFinalMessageWithoutProof},p=${proof.toString('base64')}`
}

/** `r=<nonce>,s=<salt>,i=<iterations>[,extensions]` (Kafka's ServerFirstMessage). */
export function parseServerFirstMessage(bytes: Buffer): ServerFirstMessage {
  const what = 'server first'
  const [r, sPart, i, ...rest] = text(bytes, what).split(',')
  if (r === undefined || sPart === undefined || i === undefined || !r.startsWith('r=') || !sPart.startsWith('s=') || !i.startsWith('i=')) {
    throw new ScramMessageError('Invalid SCRAM server first message: expected r=<nonce>,s=<salt>,i=<iterations>')
  }
  const nonce = r.slice(2)
  if (!PRINTABLE.test(nonce)) throw new ScramMessageError('Invalid SCRAM server first message: malformed nonce')
  const salt = sPart.slice(2)
  if (!BASE64.test(salt)) throw new ScramMessageError('Invalid SCRAM server first message: the salt is not base64')
  if (!/^[0-9]{1,9}$/.test(i.slice(2))) throw new ScramMessageError('Invalid SCRAM server first message: malformed iteration count')
  extensions(rest, what)
  return { nonce, salt: Buffer.from(salt, 'base64'), iterations: Number(i.slice(2)) }
}

/** `v=<signature>` or `e=<error>`, then optional extensions (Kafka's ServerFinalMessage). */
export function parseServerFinalMessage(bytes: Buffer): ServerFinalMessage {
  const what = 'server final'
  // split() yields at least one part.
  const [first = '', ...rest] = text(bytes, what).split(',')
  extensions(rest, what)
  if (first.startsWith('e=') && first.length > 2) return { error: first.slice(2) }
  if (first.startsWith('v=') && BASE64.test(first.slice(2))) return { serverSignature: Buffer.from(first.slice(2), 'base64') }
  throw new ScramMessageError('Invalid SCRAM server final message: expected v=<signature> or e=<error>')
}
