/**
 * JAAS configuration as Kafka reads it (its JaasConfig and Java's login config file), for the
 * login modules that carry a mechanism's server settings: PLAIN's users are the options
 * `user_<name>="<password>"` of `org.apache.kafka.common.security.plain.PlainLoginModule`.
 *
 * Two forms:
 * - a config value (`listener.name.<listener>.<mechanism>.sasl.jaas.config`): one or more entries
 *   `<loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;` — `parseJaasConfig`;
 * - a login config file (the JVM's `java.security.auth.login.config`, Kafka's
 *   kafka_server_jaas.conf): named contexts `Name { <entries> };`, the broker's being
 *   `<listener>.KafkaServer` (lower-case listener name) or `KafkaServer` — `parseJaasFile`.
 *
 * Tokens as Java's StreamTokenizer makes them for Kafka's JaasConfig: words of letters, digits and
 * `. - _ $` (not starting with a digit, `.` or `-`, which StreamTokenizer reads as a number, and
 * Kafka then refuses as a value); values in double or single quotes with Java's escapes
 * (`\"`, `\\`, `\n`, `\t`, octal); `//` and `/* *\/` comments. Error messages name keys and
 * positions, never a value: values are passwords.
 */

export interface JaasEntry {
  loginModule: string
  controlFlag: 'required' | 'requisite' | 'sufficient' | 'optional'
  options: ReadonlyMap<string, string>
}

/** A JAAS text that cannot be read: its `message` holds no option value. */
export class JaasConfigError extends Error {
  readonly code = 'INVALID_CONFIG'
  constructor(message: string) {
    super(message)
    this.name = 'JaasConfigError'
  }
}

type Token = { kind: 'word' | 'quoted'; text: string } | { kind: 'number' } | { kind: 'char'; char: string } | { kind: 'eof' }

const WORD_START = /[A-Za-z_$\u00a0-\uffff]/
const WORD_PART = /[A-Za-z0-9_$.\-\u00a0-\uffff]/
const NUMBER_START = /[0-9.-]/
const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' }

class Tokenizer {
  private pos = 0
  constructor(private readonly text: string) {}

  next(): Token {
    const s = this.text
    for (;;) {
      while (this.pos < s.length && s.charCodeAt(this.pos) <= 32) this.pos++
      if (this.pos >= s.length) return { kind: 'eof' }
      if (s.startsWith('//', this.pos) || (s[this.pos] === '/' && s[this.pos + 1] !== '*')) {
        // `//`, and a lone `/` (StreamTokenizer's default comment character): to the end of the line.
        const eol = s.indexOf('\n', this.pos)
        this.pos = eol < 0 ? s.length : eol + 1
        continue
      }
      if (s.startsWith('/*', this.pos)) {
        const end = s.indexOf('*/', this.pos + 2)
        this.pos = end < 0 ? s.length : end + 2
        continue
      }
      break
    }
    const c = s[this.pos]!
    if (c === '"' || c === "'") return this.quoted(c)
    if (NUMBER_START.test(c)) {
      while (this.pos < s.length && WORD_PART.test(s[this.pos]!)) this.pos++
      return { kind: 'number' }
    }
    if (WORD_START.test(c)) {
      const start = this.pos
      while (this.pos < s.length && WORD_PART.test(s[this.pos]!)) this.pos++
      return { kind: 'word', text: s.slice(start, this.pos) }
    }
    this.pos++
    return { kind: 'char', char: c }
  }

  private quoted(quote: string): Token {
    const s = this.text
    let out = ''
    this.pos++
    while (this.pos < s.length && s[this.pos] !== quote && s[this.pos] !== '\n' && s[this.pos] !== '\r') {
      const c = s[this.pos++]
      if (c !== '\\' || this.pos >= s.length) {
        out += c
        continue
      }
      const e = s[this.pos++]!
      if (e >= '0' && e <= '7') {
        // Up to three octal digits (at most \377), as StreamTokenizer.
        let code = e.charCodeAt(0) - 48
        const max = e <= '3' ? 2 : 1
        for (let i = 0; i < max && this.pos < s.length && s[this.pos]! >= '0' && s[this.pos]! <= '7'; i++) code = code * 8 + (s.charCodeAt(this.pos++) - 48)
        out += String.fromCharCode(code)
      } else out += ESCAPES[e] ?? e
    }
    if (s[this.pos] === quote) this.pos++
    return { kind: 'quoted', text: out }
  }
}

const FLAGS = ['required', 'requisite', 'sufficient', 'optional'] as const

function describe(token: Token): string {
  if (token.kind === 'eof') return 'the end'
  if (token.kind === 'char') return `'${token.char}'`
  return token.kind === 'number' ? 'a number' : 'a word'
}

/** One entry from its login module (already read) to its `;`. */
function readEntry(tokens: Tokenizer, loginModule: string): JaasEntry {
  const flagToken = tokens.next()
  if (flagToken.kind === 'eof') throw new JaasConfigError('Login module control flag not specified in JAAS config')
  const flag = flagToken.kind === 'word' || flagToken.kind === 'quoted' ? flagToken.text.toLowerCase() : ''
  if (!(FLAGS as readonly string[]).includes(flag)) throw new JaasConfigError(`Invalid login module control flag in JAAS config (${describe(flagToken)})`)
  const options = new Map<string, string>()
  for (;;) {
    const t = tokens.next()
    if (t.kind === 'eof') throw new JaasConfigError('JAAS config entry not terminated by semi-colon')
    if (t.kind === 'char' && t.char === ';') break
    if (t.kind !== 'word' && t.kind !== 'quoted') throw new JaasConfigError(`JAAS config: an option name expected, found ${describe(t)}`)
    const eq = tokens.next()
    const value = eq.kind === 'char' && eq.char === '=' ? tokens.next() : eq
    if (!(eq.kind === 'char' && eq.char === '=') || (value.kind !== 'word' && value.kind !== 'quoted')) {
      throw new JaasConfigError(`Value not specified for key '${t.text}' in JAAS config`)
    }
    options.set(t.text, value.text)
  }
  return { loginModule, controlFlag: flag as JaasEntry['controlFlag'], options }
}

/** A `sasl.jaas.config` value: its entries (Kafka's JaasConfig); at least one. */
export function parseJaasConfig(text: string): JaasEntry[] {
  const tokens = new Tokenizer(text)
  const entries: JaasEntry[] = []
  for (let t = tokens.next(); t.kind !== 'eof'; t = tokens.next()) {
    if (t.kind !== 'word' && t.kind !== 'quoted') throw new JaasConfigError(`JAAS config: a login module class expected, found ${describe(t)}`)
    entries.push(readEntry(tokens, t.text))
  }
  if (entries.length === 0) throw new JaasConfigError('Login module not specified in JAAS config')
  return entries
}

/** A JAAS login config file: its contexts by name, each with its entries. */
export function parseJaasFile(text: string): Map<string, JaasEntry[]> {
  const tokens = new Tokenizer(text)
  const contexts = new Map<string, JaasEntry[]>()
  for (let t = tokens.next(); t.kind !== 'eof'; t = tokens.next()) {
    if (t.kind !== 'word' && t.kind !== 'quoted') throw new JaasConfigError(`JAAS file: a context name expected, found ${describe(t)}`)
    const name = t.text
    const open = tokens.next()
    if (!(open.kind === 'char' && open.char === '{')) throw new JaasConfigError(`JAAS file: '{' expected after ${name}`)
    const entries: JaasEntry[] = []
    for (;;) {
      const m = tokens.next()
      if (m.kind === 'char' && m.char === '}') break
      if (m.kind !== 'word' && m.kind !== 'quoted') throw new JaasConfigError(`JAAS file: context ${name} not closed by '}'`)
      entries.push(readEntry(tokens, m.text))
    }
    const semi = tokens.next()
    if (!(semi.kind === 'char' && semi.char === ';')) throw new JaasConfigError(`JAAS file: ';' expected after the '}' of ${name}`)
    contexts.set(name, [...(contexts.get(name) ?? []), ...entries])
  }
  return contexts
}

/** Kafka's JaasContext.configEntryOption: the option `key` of the entry of `loginModule`. */
export function jaasOption(entries: readonly JaasEntry[], key: string, loginModule: string): string | undefined {
  for (const entry of entries) if (entry.loginModule === loginModule && entry.options.has(key)) return entry.options.get(key)
  return undefined
}

const JAAS_ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r' }

/**
 * A value (or an option name) in double quotes, escaped so that Kafka's JaasConfig and
 * `parseJaasConfig` read back exactly `value`: what writes a `sasl.jaas.config` line for a password.
 */
export function jaasQuote(value: string): string {
  return `"${value.replace(/[\\"\n\r]/g, (c) => JAAS_ESCAPES[c] ?? c)}"`
}
