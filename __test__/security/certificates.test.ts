import { X509Certificate } from 'node:crypto'
import { once } from 'node:events'
import { connect, createServer, type TLSSocket } from 'node:tls'
import { describe, expect, it } from 'vitest'
import { createCertificateAuthority, readPrivateKey } from '../../ts/security/certificates.js'
import { parsePrincipal, principalToString } from '../../ts/security/kafka-principal.js'

describe('throw-away certificates', () => {
  const ca = createCertificateAuthority({ commonName: 'test CA' })
  const server = ca.issue({ subject: { CN: 'localhost' }, usage: 'server' })
  const client = ca.issue({ subject: { CN: 'alice', OU: 'eng', O: 'ferrolog' }, usage: 'client', keyPassword: 'secret' })

  it('signs certificates that verify against the CA, with the SANs a broker needs', () => {
    const cert = new X509Certificate(server.certificatePem)
    expect(cert.verify(new X509Certificate(ca.certificatePem).publicKey)).toBe(true)
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1')
    expect(cert.checkHost('localhost')).toBe('localhost')
    expect(new X509Certificate(ca.certificatePem).ca).toBe(true)
    expect(server.chainPem.startsWith(server.certificatePem)).toBe(true)
  })

  it('encrypts a key with its password and refuses a wrong one', () => {
    expect(client.keyPem).toContain('BEGIN ENCRYPTED PRIVATE KEY')
    expect(readPrivateKey(client.keyPem, 'secret').asymmetricKeyType).toBe('rsa')
    expect(() => readPrivateKey(client.keyPem, 'wrong')).toThrow()
  })

  it('carries a TLS handshake with a client certificate over a real socket', async () => {
    const tlsServer = createServer({ key: server.keyPem, cert: server.certificatePem, ca: ca.certificatePem, requestCert: true, rejectUnauthorized: true })
    const subjects: string[] = []
    tlsServer.on('secureConnection', (socket: TLSSocket) => {
      subjects.push(socket.getPeerX509Certificate()?.subject ?? '')
      socket.end('ok')
    })
    tlsServer.listen(0, '127.0.0.1')
    await once(tlsServer, 'listening')
    const { port } = tlsServer.address() as { port: number }
    try {
      const socket = connect({ host: '127.0.0.1', port, ca: ca.certificatePem, key: client.keyPem, passphrase: 'secret', cert: client.certificatePem })
      const [data] = (await once(socket, 'data')) as [Buffer]
      expect(data.toString()).toBe('ok')
      expect(socket.authorized).toBe(true)
      socket.destroy()
      expect(subjects).toEqual(['CN=alice\nOU=eng\nO=ferrolog'])

      const other = createCertificateAuthority().issue({ subject: { CN: 'mallory' }, usage: 'client' })
      const refused = connect({ host: '127.0.0.1', port, ca: ca.certificatePem, key: other.keyPem, cert: other.certificatePem })
      const outcome = await new Promise<string>((resolve) => {
        refused.on('error', (err) => resolve(err.message))
        refused.on('data', () => resolve('served'))
        refused.on('close', () => resolve('closed'))
      })
      expect(outcome).not.toBe('served')
      refused.destroy()
    } finally {
      tlsServer.close()
    }
  })
})

describe('KafkaPrincipal', () => {
  it('parses Type:name at the first colon, as Kafka does', () => {
    expect(parsePrincipal('User:alice')).toEqual({ principalType: 'User', name: 'alice' })
    expect(parsePrincipal('User:CN=a,O=b:c')).toEqual({ principalType: 'User', name: 'CN=a,O=b:c' })
    expect(principalToString({ principalType: 'Group', name: 'ops' })).toBe('Group:ops')
    expect(() => parsePrincipal('alice')).toThrow(/Type:name/)
    expect(() => parsePrincipal(':alice')).toThrow(/Type:name/)
  })
})
