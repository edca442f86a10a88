/**
 * Kafka's SecurityProtocol: what a listener speaks under the Kafka protocol. SSL and SASL_SSL
 * wrap the connection in TLS; SASL_PLAINTEXT and SASL_SSL authenticate it with SaslHandshake and
 * SaslAuthenticate before any other request but ApiVersions.
 */
export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const

export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number]

export function isSecurityProtocol(name: string): name is SecurityProtocol {
  return (SECURITY_PROTOCOLS as readonly string[]).includes(name)
}

/** The connection is wrapped in TLS. */
export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL'
}

/** The connection must authenticate with SASL before its requests are served. */
export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL'
}
