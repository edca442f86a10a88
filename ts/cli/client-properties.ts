/**
 * The client security options every client command takes (`ferrolog produce`, `consume`,
 * `topics`), as Kafka's tools and kcat take them:
 *
 *   --command-config FILE   Kafka's client properties file (kafka-topics.sh --command-config,
 *                           the console tools' --consumer.config / --producer.config), e.g.
 *                             security.protocol=SASL_SSL
 *                             ssl.truststore.type=PEM
 *                             ssl.truststore.location=/path/ca.pem
 *                             sasl.mechanism=SCRAM-SHA-512
 *                             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule \
 *                               required username="alice" password="alice-secret";
 *   -X KEY=VALUE            one property, librdkafka style (kcat -X): security.protocol=SSL,
 *                           ssl.ca.location=ca.pem, sasl.mechanism=PLAIN, sasl.username=...
 *
 * -X wins over the file. Keys are those of ts/client/client-security.ts; other keys of the file
 * (a client.properties often sets timeouts too) are left unused, as Kafka's tools leave unknown
 * ones; an unknown -X key is refused.
 *
 * The file is Java's .properties format (ts/config/java-properties.ts).
 */
import { readFileSync } from 'node:fs'
import { parseJavaProperties } from '../config/java-properties.js'
import { clientSecurityFrom, securityConfigKey, type ClientSecurity } from '../client/client-security.js'

/**
 * Takes --command-config and -X out of `args`: the other arguments, and the security they give.
 * `usage` makes the command's usage error.
 */
export function securityArgs(args: string[], usage: (message: string) => Error): { rest: string[]; security: ClientSecurity } {
  const rest: string[] = []
  let file: string | undefined
  const overrides: Array<[string, string]> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--command-config' || arg.startsWith('--command-config=')) {
      file = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i]
      if (!file) throw usage('--command-config needs a file')
    } else if (arg === '-X' || (arg.startsWith('-X') && !arg.startsWith('--'))) {
      const kv = arg === '-X' ? args[++i] : arg.slice(2)
      const eq = kv?.indexOf('=') ?? -1
      if (kv === undefined || eq <= 0) throw usage('-X needs KEY=VALUE')
      const key = kv.slice(0, eq)
      if (securityConfigKey(key) === undefined) throw usage(`-X ${key}: not a client security property (security.protocol, ssl.*, sasl.*)`)
      overrides.push([key, kv.slice(eq + 1)])
    } else {
      rest.push(arg)
    }
  }
  const props: Record<string, string> = {}
  if (file !== undefined) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      throw usage(`--command-config ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    for (const [key, value] of parseJavaProperties(text)) props[key] = value
  }
  for (const [key, value] of overrides) props[key] = value
  return { rest, security: clientSecurityFrom(props) }
}
