/**
 * JAAS configuration text as Kafka's `sasl.jaas.config` holds it (Kafka's JaasConfig):
 *
 *   LoginModuleClass controlFlag key1=value1 key2="quoted value";
 *
 * one or more entries, each ended by `;`. A value is a word or a double-quoted string (with `\`
 * escapes); `//` and `/* *\/` comments are skipped, as Java's StreamTokenizer does for Kafka.
 * Values are secrets (PlainLoginModule's `user_alice="..."`): no error message here holds one.
 */

export type JaasControlFlag = 'required' | 'requisite' | 'sufficient' | 'optional'

export interface JaasLoginModule {
  loginModule: string
  controlFlag: JaasControlFlag
  options: Readonly<Record<string, string>>
}

/** A `sasl.jaas.config` that cannot be parsed; its message names keys, never values. */
export class JaasConfigError extends Error {
  readonly code = 'INVALID_CONFIG' as const
  constructor(message: string) {
    super(message)
    this.name = 'JaasConfigError'
  }
}

const FLAGS: readonly JaasControlFlag[] = ['required', 'requisite', 'sufficient', 'optional']

type Token = { kind: 'word'; text: string } | { kind: 'quoted'; text: string } | { kind: 'punct'; text: '=' | ';' }

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (/\s/.test(c)) {
      i++
    } else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i)
      i = end < 0 ? text.length : end + 1
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2)
      if (end < 0) throw new JaasConfigError('JAAS config has an unterminated comment')
      i = end + 2
    } else if (c === '=' || c === ';') {
      tokens.push({ kind: 'punct', text: c })
      i++
    } else if (c === '"') {
      let value = ''
      i++
      for (;;) {
        if (i >= text.length) throw new JaasConfigError('JAAS config has an unterminated quoted value')
        const q = text[i]
        if (q === '"') break
        if (q === '\\' && i + 1 < text.length) {
          const e = text[i + 1]
          value += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e
          i += 2
        } else {
          value += q
          i++
        }
      }
      i++
      tokens.push({ kind: 'quoted', text: value })
    } else {
      let end = i
      while (end < text.length && !/[\s=;"]/.test(text[end])) end++
      tokens.push({ kind: 'word', text: text.slice(i, end) })
      i = end
    }
  }
  return tokens
}

/** The login modules of `text`, in order; throws JaasConfigError when it is not JAAS config. */
export function parseJaasConfig(text: string): JaasLoginModule[] {
  const tokens = tokenize(text)
  const modules: JaasLoginModule[] = []
  let i = 0
  while (i < tokens.length) {
    const name = tokens[i++]
    if (name.kind !== 'word') throw new JaasConfigError('JAAS config entry must start with a login module class name')
    const flag = tokens[i++]
    if (!flag || flag.kind !== 'word' || !FLAGS.includes(flag.text.toLowerCase() as JaasControlFlag)) {
      throw new JaasConfigError(`Invalid JAAS config: login module ${name.text} needs a control flag (${FLAGS.join(', ')})`)
    }
    const options: Record<string, string> = {}
    for (;;) {
      const t = tokens[i++]
      if (!t) throw new JaasConfigError(`Invalid JAAS config: login module ${name.text} is not terminated by ';'`)
      if (t.kind === 'punct' && t.text === ';') break
      if (t.kind !== 'word') throw new JaasConfigError(`Invalid JAAS config: expected an option name in login module ${name.text}`)
      const eq = tokens[i++]
      if (!eq || eq.kind !== 'punct' || eq.text !== '=') throw new JaasConfigError(`Invalid JAAS config: option '${t.text}' of ${name.text} has no '='`)
      const value = tokens[i++]
      if (!value || value.kind === 'punct') throw new JaasConfigError(`Value not specified for key '${t.text}' in JAAS config`)
      options[t.text] = value.text
    }
    modules.push({ loginModule: name.text, controlFlag: flag.text.toLowerCase() as JaasControlFlag, options })
  }
  if (modules.length === 0) throw new JaasConfigError('JAAS config entry not terminated by semi-colon')
  return modules
}
