/**
 * Java's .properties format, shared by server.properties (the broker's --config) and a client's
 * --command-config: continuation lines, escapes and separators as java.util.Properties reads them,
 * and formatJavaProperties writing what reads back (PEM text, passwords with backslashes).
 */
import { describe, expect, it } from 'vitest'
import { formatJavaProperties, parseJavaProperties } from '../../ts/config/java-properties.js'
import { parseProperties } from '../../ts/server/config.js'

describe('Java properties', () => {
  it("the broker reads server.properties as Kafka does: a JAAS line continued with a backslash, ':' separators, escapes", () => {
    // docs/security.md's PLAIN example, as a Kafka broker reads it.
    const text = [
      '# comment',
      'listeners=SASL_PLAINTEXT://127.0.0.1:9093',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\',
      '    user_alice="alice-secret" user_bob="bob-secret";',
      'ssl.principal.mapping.rules: RULE:^CN=(.*?)\\\\,OU=.*$/$1/,DEFAULT',
      '',
    ].join('\n')
    expect(parseProperties(text)).toEqual({
      listeners: 'SASL_PLAINTEXT://127.0.0.1:9093',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";',
      'ssl.principal.mapping.rules': 'RULE:^CN=(.*?)\\,OU=.*$/$1/,DEFAULT',
    })
  })

  it('formatJavaProperties writes values that read back exactly: PEM newlines, backslashes, leading blanks, separators in keys', () => {
    const properties = {
      'ssl.truststore.certificates': '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      'sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="a \\"b\\" \\\\ c";',
      'odd key=with:separators #!': ' leading blank\tand tab',
      empty: '',
    }
    const text = formatJavaProperties(properties)
    expect(text.split('\n')).toHaveLength(Object.keys(properties).length + 1)
    expect(Object.fromEntries(parseJavaProperties(text))).toEqual(properties)
  })
})
