/**
 * KafkaPrincipal (Kafka's class of that name): who sent a request, as ACLs and `super.users` name
 * it. A type and a name, written `User:alice`. A connection's principal is `User:ANONYMOUS` until
 * TLS (the client certificate's DN, mapped by `ssl.principal.mapping.rules`) or SASL (the
 * authorization id) authenticates it.
 */
export interface KafkaPrincipal {
  readonly principalType: string
  readonly name: string
}

/** The principal type of users: `User:alice`. */
export const USER_TYPE = 'User'

/** The principal of an unauthenticated connection (PLAINTEXT, or SSL without a client certificate). */
export const ANONYMOUS: KafkaPrincipal = Object.freeze({ principalType: USER_TYPE, name: 'ANONYMOUS' })

export function userPrincipal(name: string): KafkaPrincipal {
  return { principalType: USER_TYPE, name }
}

/** `User:alice`, as Kafka's KafkaPrincipal.toString. */
export function principalToString(principal: KafkaPrincipal): string {
  return `${principal.principalType}:${principal.name}`
}

/**
 * Parses `Type:name` (Kafka's SecurityUtils.parseKafkaPrincipal): the type is before the first
 * colon, the name is everything after it (names may hold colons). Throws without a colon or with
 * an empty type.
 */
export function parsePrincipal(text: string): KafkaPrincipal {
  const colon = text.indexOf(':')
  if (colon <= 0) throw new Error(`principal must be Type:name, got ${JSON.stringify(text)}`)
  return { principalType: text.slice(0, colon), name: text.slice(colon + 1) }
}

export function samePrincipal(a: KafkaPrincipal, b: KafkaPrincipal): boolean {
  return a.principalType === b.principalType && a.name === b.name
}
