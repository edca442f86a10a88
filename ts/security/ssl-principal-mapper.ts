/**
 * Kafka's SslPrincipalMapper: `ssl.principal.mapping.rules` turn a client certificate's subject
 * DN (RFC 2253, as Java's X500Principal.getName() writes it: `CN=alice,OU=eng,O=example`) into
 * the name of its `User:` principal.
 *
 * Rules are comma-separated, tried in order; the first that applies gives the name:
 * - `DEFAULT`: the DN itself.
 * - `RULE:pattern/replacement/[L|U]`: applies when the pattern (a regular expression) matches the
 *   whole DN; the name is the DN with every match replaced by `replacement` (`$1`... are the
 *   groups; a `$N` past the last group is literal text; `\` escapes the next character), then
 *   lower-cased (`L`) or upper-cased (`U`). `\/` and `\\` write `/` and `\` inside a rule.
 * No rule applies: NoMatchingRuleError (the connection is refused, as Kafka refuses it). Empty
 * rules are ignored. The default rules are `DEFAULT`.
 *
 * The patterns are JavaScript regular expressions: what Kafka's examples use (groups, classes,
 * lazy quantifiers, anchors) means the same in both; Java-only syntax (possessive quantifiers,
 * `\A`, `\Z`) is not understood.
 */

export const DEFAULT_SSL_PRINCIPAL_MAPPING_RULES = 'DEFAULT'

const RULE_PATTERN = String.raw`(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

/** No rule of the mapper applies to a DN. */
export class NoMatchingRuleError extends Error {
  readonly code = 'NO_MATCHING_RULE' as const
  constructor(message: string) {
    super(message)
    this.name = 'NoMatchingRuleError'
  }
}

interface Rule {
  isDefault: boolean
  pattern: string
  replacement: string
  toLowerCase: boolean
  toUpperCase: boolean
}

/** Splits the rules text as Kafka's RULE_SPLITTER finds them. */
function splitRules(text: string): string[] {
  const splitter = new RegExp(String.raw`\s*(${RULE_PATTERN})\s*(,\s*|$)`, 'g')
  const trimmed = text.trim()
  const out: string[] = []
  let m: RegExpExecArray | null
  while ((m = splitter.exec(trimmed)) !== null) {
    out.push(m[1]!)
    // An empty match: move on one character, as Java's Matcher.find does.
    if (m[0] === '') splitter.lastIndex++
    if (splitter.lastIndex > trimmed.length) break
  }
  return out
}

function parseRules(rules: string[]): Rule[] {
  const parser = new RegExp(`^(?:${RULE_PATTERN})`)
  const out: Rule[] = []
  for (const rule of rules) {
    const m = parser.exec(rule)
    if (!m) throw new SyntaxError(`Invalid rule: ${rule}`)
    if (m[0].length !== rule.length) throw new SyntaxError(`Invalid rule: \`${rule}\`, unmatched substring: \`${rule.slice(m[0].length)}\``)
    if (m[1] !== undefined) out.push({ isDefault: true, pattern: '', replacement: '', toLowerCase: false, toUpperCase: false })
    else if (m[2] !== undefined) {
      // The pattern must compile (Kafka's Pattern.compile throws at configuration too).
      try {
        new RegExp(m[2])
      } catch (err) {
        throw new SyntaxError(`Invalid rule: ${rule}: ${(err as Error).message}`, { cause: err })
      }
      out.push({ isDefault: false, pattern: m[2], replacement: m[4]!, toLowerCase: m[6] === 'L', toUpperCase: m[6] === 'U' })
    }
    // An empty rule is ignored.
  }
  return out
}

/** The number of capturing groups of `pattern`. */
function groupCount(pattern: string): number {
  return new RegExp(`${pattern}|`).exec('')!.length - 1
}

/**
 * Kafka's escapeLiteralBackReferences: a `$N` naming no group (after dropping its last digits
 * while it is 10 or more and names no group) becomes the literal text `\$N`. With no group at
 * all the replacement is left as it is.
 */
function escapeLiteralBackReferences(replacement: string, groups: number): string {
  if (groups === 0) return replacement
  return replacement.replace(/\$(\d+)/g, (whole: string, digits: string) => {
    if (digits.startsWith('0')) return whole
    let n = Number(digits)
    while (n > groups && n >= 10) n = Math.floor(n / 10)
    return n > groups ? `\\${whole}` : whole
  })
}

/**
 * Java's Matcher.appendReplacement for one match: `\x` is x; `$` and a digit is that group, with
 * more digits taken while they still name a group.
 */
function javaReplacement(replacement: string, groups: number, match: readonly string[]): string {
  let out = ''
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i]
    if (c === '\\') {
      if (++i >= replacement.length) throw new SyntaxError('character to be escaped is missing')
      out += replacement[i]
    } else if (c === '$') {
      if (++i >= replacement.length || !/\d/.test(replacement[i]!)) throw new SyntaxError(`Illegal group reference in ${replacement}`)
      let ref = Number(replacement[i])
      if (ref > groups) throw new SyntaxError(`No group ${ref}`)
      while (i + 1 < replacement.length && /\d/.test(replacement[i + 1]!) && ref * 10 + Number(replacement[i + 1]) <= groups) ref = ref * 10 + Number(replacement[++i])
      out += match[ref] ?? ''
    } else out += c
  }
  return out
}

function applyRule(rule: Rule, dn: string): string | null {
  if (rule.isDefault) return dn
  if (!new RegExp(`^(?:${rule.pattern})$`).test(dn)) return null
  const groups = groupCount(rule.pattern)
  const replacement = escapeLiteralBackReferences(rule.replacement, groups)
  let result = dn.replace(new RegExp(rule.pattern, 'g'), (...args: unknown[]) => javaReplacement(replacement, groups, args.slice(0, groups + 1) as string[]))
  if (rule.toLowerCase) result = result.toLowerCase()
  else if (rule.toUpperCase) result = result.toUpperCase()
  return result
}

function ruleToString(rule: Rule): string {
  if (rule.isDefault) return 'DEFAULT'
  return `RULE:${rule.pattern}/${rule.replacement}${rule.toLowerCase ? '/L' : rule.toUpperCase ? '/U' : ''}`
}

export class SslPrincipalMapper {
  private readonly rules: Rule[]

  /** Parses `rules` (null: DEFAULT); throws SyntaxError ("Invalid rule: ...") as Kafka does. */
  constructor(rules: string | null = DEFAULT_SSL_PRINCIPAL_MAPPING_RULES) {
    this.rules = parseRules(splitRules(rules ?? DEFAULT_SSL_PRINCIPAL_MAPPING_RULES))
  }

  /** The principal name of `distinguishedName`; NoMatchingRuleError when no rule applies. */
  getName(distinguishedName: string): string {
    for (const rule of this.rules) {
      const name = applyRule(rule, distinguishedName)
      if (name !== null) return name
    }
    throw new NoMatchingRuleError(`No rules apply to ${distinguishedName}, rules ${this.rulesText()}`)
  }

  private rulesText(): string {
    return `[${this.rules.map(ruleToString).join(', ')}]`
  }

  toString(): string {
    return `SslPrincipalMapper(rules = ${this.rulesText()})`
  }
}
