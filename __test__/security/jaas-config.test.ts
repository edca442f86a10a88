/**
 * Kafka's JAAS syntax as its JaasConfig (Java's StreamTokenizer) reads it, and PLAIN's users and
 * checks (Kafka's PlainSaslServer messages), with no password in any error message.
 */
import { describe, expect, it } from 'vitest'
import { JaasConfigError, jaasOption, jaasQuote, parseJaasConfig, parseJaasFile } from '../../ts/security/jaas-config.js'
import { PLAIN_LOGIN_MODULE, PlainSaslServer, plainCredentialsFromJaas } from '../../ts/security/plain/plain-sasl-server.js'
import { SaslAuthenticationError } from '../../ts/security/sasl-server.js'

describe('JAAS config', () => {
  it('jaasQuote writes any name and value so that they read back as they were', () => {
    const values = ['plain', 'with "quotes"', 'back\\slash\\', 'new\nline\r', "it's; {braces} = // not a comment", '', 'ünïcødé']
    for (const value of values) {
      const [entry] = parseJaasConfig(`Module required ${jaasQuote(`user_${value}`)}=${jaasQuote(value)};`)
      expect([...entry.options]).toEqual([[`user_${value}`, value]])
    }
  })

  it('reads entries, flags, quoted and bare values, escapes and comments', () => {
    const entries = parseJaasConfig(
      `// the broker's users
       org.apache.kafka.common.security.plain.PlainLoginModule REQUIRED
         username="admin" /* its own */ password='adm"in'
         user_alice="alice-secret" user_bob="a \\"quoted\\" \\\\ pass\\tword" user_carol=bare-word.$x
         user_dave="caf\\303\\251" ;
       other.Module optional;`,
    )
    expect(entries.map((e) => [e.loginModule, e.controlFlag])).toEqual([
      [PLAIN_LOGIN_MODULE, 'required'],
      ['other.Module', 'optional'],
    ])
    const o = entries[0].options
    expect(o.get('password')).toBe('adm"in')
    expect(o.get('user_alice')).toBe('alice-secret')
    expect(o.get('user_bob')).toBe('a "quoted" \\ pass\tword')
    expect(o.get('user_carol')).toBe('bare-word.$x')
    expect(o.get('user_dave')).toBe('caf\u00c3\u00a9') // octal escapes are chars, as StreamTokenizer's
    expect(jaasOption(entries, 'user_alice', PLAIN_LOGIN_MODULE)).toBe('alice-secret')
    expect(jaasOption(entries, 'user_alice', 'other.Module')).toBeUndefined()
  })

  it('refuses what Kafka refuses, naming keys and never values', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /Login module not specified/],
      ['a.B', /control flag not specified/],
      ['a.B maybe;', /Invalid login module control flag/],
      ['a.B required user_x="secret-1"', /not terminated by semi-colon/],
      ['a.B required user_x=;', /Value not specified for key 'user_x'/],
      ['a.B required user_x 12;', /Value not specified for key 'user_x'/],
      ['a.B required user_x=12345;', /Value not specified for key 'user_x'/], // a number: StreamTokenizer's, no string value
    ]
    for (const [text, message] of cases) {
      let err: unknown
      try {
        parseJaasConfig(text)
      } catch (e) {
        err = e
      }
      expect(err, text).toBeInstanceOf(JaasConfigError)
      expect((err as Error).message, text).toMatch(message)
      expect((err as Error).message).not.toContain('secret-1')
      expect((err as Error).message).not.toContain('12345')
    }
  })

  it('reads a login config file: contexts, the listener-specific one and KafkaServer', () => {
    const contexts = parseJaasFile(`
      KafkaServer {
        org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";
      };
      sasl_plaintext.KafkaServer {
        org.apache.kafka.common.security.plain.PlainLoginModule required
          user_bob="bob-secret";
      };
      Client { other.Module required; };`)
    expect([...contexts.keys()]).toEqual(['KafkaServer', 'sasl_plaintext.KafkaServer', 'Client'])
    expect(jaasOption(contexts.get('sasl_plaintext.KafkaServer')!, 'user_bob', PLAIN_LOGIN_MODULE)).toBe('bob-secret')
    expect(() => parseJaasFile('KafkaServer { a.B required; }')).toThrow(/';' expected/)
    expect(() => parseJaasFile('KafkaServer a.B required;')).toThrow(/'\{' expected/)
  })
})

describe('PLAIN', () => {
  const credentials = plainCredentialsFromJaas(parseJaasConfig(`${PLAIN_LOGIN_MODULE} required user_alice="alice-secret" user_émile="pässword";`))
  const evaluate = async (message: Buffer | string) => {
    const server = new PlainSaslServer(credentials)
    try {
      await server.evaluateResponse(Buffer.isBuffer(message) ? message : Buffer.from(message, 'utf8'))
      return { complete: server.complete, user: server.authorizationId() }
    } catch (err) {
      expect(err).toBeInstanceOf(SaslAuthenticationError)
      return (err as Error).message
    }
  }

  it("authenticates as Kafka's PlainSaslServer and refuses with its messages", async () => {
    expect(await evaluate('\0alice\0alice-secret')).toEqual({ complete: true, user: 'alice' })
    expect(await evaluate('alice\0alice\0alice-secret')).toEqual({ complete: true, user: 'alice' })
    expect(await evaluate('\0émile\0pässword')).toEqual({ complete: true, user: 'émile' })
    expect(await evaluate('\0alice\0alice-secreT')).toBe('Authentication failed: Invalid username or password')
    expect(await evaluate('\0alice\0alice-secret-longer')).toBe('Authentication failed: Invalid username or password')
    expect(await evaluate('\0nobody\0alice-secret')).toBe('Authentication failed: Invalid username or password')
    expect(await evaluate('bob\0alice\0alice-secret')).toBe('Authentication failed: Client requested an authorization id that is different from username')
    expect(await evaluate('\0\0alice-secret')).toBe('Authentication failed: username not specified')
    expect(await evaluate('\0alice\0')).toBe('Authentication failed: password not specified')
    expect(await evaluate('alice\0alice-secret')).toBe('Invalid SASL/PLAIN response: expected 3 tokens, got 2')
    expect(await evaluate('\0alice\0alice-secret\0x')).toBe('Invalid SASL/PLAIN response: expected 3 tokens, got 4')
    expect(await evaluate('')).toBe('Invalid SASL/PLAIN response: expected 3 tokens, got 1')
    expect(await evaluate(Buffer.from([0, 0x61, 0x6c, 0x69, 0x63, 0x65, 0, 0xff, 0xfe]))).toBe('Authentication failed: Invalid username or password')
    const server = new PlainSaslServer(credentials)
    await server.evaluateResponse(Buffer.from('\0alice\0alice-secret'))
    await expect(server.evaluateResponse(Buffer.from('\0alice\0alice-secret'))).rejects.toThrow('Authentication exchange has completed')
  })
})
