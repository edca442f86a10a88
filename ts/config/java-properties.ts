/**
 * Java's .properties format (java.util.Properties.load), as Kafka reads server.properties and its
 * tools read client.properties: `key=value`, `key: value` or `key value`; lines starting with # or
 * ! are comments; a line ending in an odd number of backslashes continues on the next (its
 * leading blanks dropped), so a long `sasl.jaas.config` may span lines; \t \n \r \f \uXXXX
 * and \<char> escapes (a literal backslash is `\\`). `formatJavaProperties` writes what this
 * reads back, e.g. a PEM's newlines as `\n`.
 */

/** Parses Java .properties text into its entries, in order (a later key wins). */
export function parseJavaProperties(text: string): Map<string, string> {
  const out = new Map<string, string>()
  const lines = text.split(/\r\n|\r|\n/)
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.replace(/^[ \t\f]+/, '')
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue
    // continuation: an odd number of trailing backslashes
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!.replace(/^[ \t\f]+/, '')
    let k = 0
    let key = ''
    while (k < line.length && !/[=: \t\f]/.test(line[k]!)) {
      if (line[k] === '\\' && k + 1 < line.length) key += line[++k]
      else key += line[k]
      k++
    }
    while (k < line.length && /[ \t\f]/.test(line[k]!)) k++
    if (k < line.length && (line[k] === '=' || line[k] === ':')) k++
    while (k < line.length && /[ \t\f]/.test(line[k]!)) k++
    out.set(key, unescape(line.slice(k)))
  }
  return out
}

function unescape(s: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    if (e.length === 5) return String.fromCharCode(parseInt(e.slice(1), 16))
    return ({ t: '\t', n: '\n', r: '\r', f: '\f' } as Record<string, string>)[e] ?? e
  })
}

const WRITE_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\f': '\\f' }

/** Writes `properties` one a line, escaped so that Java's Properties.load (and parseJavaProperties) read them back. */
export function formatJavaProperties(properties: Readonly<Record<string, string>>): string {
  const escape = (s: string) => s.replace(/[\\\n\r\t\f]/g, (c) => WRITE_ESCAPES[c] ?? c)
  const lines = Object.entries(properties).map(([key, value]) => {
    const k = escape(key).replace(/[=: #!]/g, '\\$&')
    return `${k}=${escape(value).replace(/^[ ]/, '\\ ')}`
  })
  return lines.join('\n') + '\n'
}
