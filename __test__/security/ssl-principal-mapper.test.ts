/**
 * ssl.principal.mapping.rules as Kafka's SslPrincipalMapper applies them: Kafka's own
 * SslPrincipalMapperTest, case for case (valid and invalid rules, the mapping examples, rule
 * splitting with escapes and empty rules, an escaped comma in a CN).
 */
import { describe, expect, it } from 'vitest'
import { NoMatchingRuleError, SslPrincipalMapper } from '../../ts/security/ssl-principal-mapper.js'

describe("Kafka's SslPrincipalMapperTest", () => {
  it('accepts the valid rules', () => {
    for (const rules of [
      'DEFAULT',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT',
      'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/',
      'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L',
      'RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U',
      'RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/',
      'RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/',
    ])
      expect(() => new SslPrincipalMapper(rules), rules).not.toThrow()
  })

  it('refuses the invalid rules', () => {
    for (const rules of [
      'default',
      'DEFAUL',
      'DEFAULT/L',
      'DEFAULT/U',
      'RULE:CN=(.*?),OU=ServiceUsers.*/$1',
      'rule:^CN=(.*?),OU=ServiceUsers.*$/$1/',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/L',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/U',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/LU',
    ])
      expect(() => new SslPrincipalMapper(rules), rules).toThrow(/Invalid rule/)
  })

  it('maps DNs as Kafka does', () => {
    const mapper = new SslPrincipalMapper(
      [
        'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L',
        'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L',
        'RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U',
        'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U',
        'DEFAULT',
      ].join(', '),
    )
    expect(mapper.getName('CN=Duke,OU=ServiceUsers,O=Org,C=US')).toBe('duke')
    expect(mapper.getName('CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US')).toBe('duke@sme')
    expect(mapper.getName('cn=duke,ou=sme,dc=mycp,dc=com')).toBe('DUKE@SME')
    expect(mapper.getName('cN=duke,OU=JavaSoft,O=Sun Microsystems')).toBe('DUKE')
    expect(mapper.getName('OU=JavaSoft,O=Sun Microsystems,C=US')).toBe('OU=JavaSoft,O=Sun Microsystems,C=US')
  })

  it('splits rules as Kafka does', () => {
    const cases: Array<[string, string]> = [
      ['[]', ''],
      ['[DEFAULT]', 'DEFAULT'],
      ['[RULE:/]', 'RULE://'],
      ['[RULE:/.*]', 'RULE:/.*/'],
      ['[RULE:/.*/L]', 'RULE:/.*/L'],
      ['[RULE:/, DEFAULT]', 'RULE://,DEFAULT'],
      ['[RULE:/, DEFAULT]', '  RULE:// ,  DEFAULT  '],
      ['[RULE:   /     , DEFAULT]', '  RULE:   /     / ,  DEFAULT  '],
      ['[RULE:  /     /U, DEFAULT]', '  RULE:  /     /U   ,DEFAULT  '],
      ['[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]', '  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  '],
      ['[]', ',   , , ,      , , ,   '],
      ['[RULE:/, DEFAULT]', ',,RULE://,,,DEFAULT,,'],
      ['[RULE: /   , DEFAULT]', ',  , RULE: /   /    ,,,   DEFAULT, ,   '],
      ['[RULE:   /  /U, DEFAULT]', '     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,'],
      ['[RULE:\\/\\\\\\(\\)\\n\\t/\\/\\/]', 'RULE:\\/\\\\\\(\\)\\n\\t/\\/\\//'],
      ['[RULE:\\**\\/+/*/L, RULE:\\/*\\**/**]', 'RULE:\\**\\/+/*/L,RULE:\\/*\\**/**/'],
      [
        '[RULE:,RULE:,/,RULE:,\\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]',
        'RULE:,RULE:,/,RULE:,\\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT',
      ],
    ]
    for (const [expected, rules] of cases) expect(new SslPrincipalMapper(rules).toString(), rules).toBe(`SslPrincipalMapper(rules = ${expected})`)
  })

  it('keeps an escaped comma of a CN', () => {
    const mapper = new SslPrincipalMapper('RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT')
    expect(mapper.getName('CN=Tkac\\, Adam,OU=ITZ,DC=geodis,DC=cz')).toBe('Tkac\\, Adam')
  })

  it('refuses a DN no rule applies to, and treats a $N past the last group as text', () => {
    expect(() => new SslPrincipalMapper('RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/').getName('CN=x,OU=Other')).toThrow(NoMatchingRuleError)
    expect(new SslPrincipalMapper('RULE:^CN=(.*?),O=(.*)$/$1@$3/').getName('CN=a,O=b')).toBe('a@$3')
    expect(new SslPrincipalMapper('RULE:^CN=(.*?),O=(.*)$/$12/').getName('CN=a,O=b')).toBe('a2')
  })
})
