/**
 * Kafka's `TopicRegexResolver` and `Utils.throwIfRegularExpressionIsInvalid`: the topics a
 * consumer group's regular expressions (`subscribedTopicRegex`, KIP-848) match.
 *
 * The syntax is RE2's, as Kafka's (it compiles with RE2/J): re2js, the JavaScript port of RE2/J,
 * compiles and matches here, so a pattern Kafka refuses is refused with the same description
 * (`missing closing )`), and lookarounds or backreferences, which JavaScript's RegExp would take,
 * are refused as RE2 refuses them. A topic matches when the whole name matches (`matches()`, not
 * a search): `orders.*` matches `orders-eu`, not `eu-orders`.
 *
 * A resolution (Kafka's `ResolvedRegularExpression`) is the set of matching topic names, the
 * version of the topics it saw and when it ran; it is persisted as the group's
 * ConsumerGroupRegularExpression record (./consumer-group-records.ts).
 */
import { RE2JS } from 're2js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { GroupApiError, type ResolvedRegularExpression } from './consumer-group.js'

/** RE2's syntax error description, or null when `regex` compiles. */
function syntaxError(regex: string): string | null {
  try {
    RE2JS.compile(regex)
    return null
  } catch (err) {
    const e = err as { getDescription?: () => string; message?: string }
    return e.getDescription?.() ?? e.message ?? String(err)
  }
}

/** INVALID_REGULAR_EXPRESSION with Kafka's message when `regex` is not RE2 syntax. */
export function throwIfRegularExpressionIsInvalid(regex: string): void {
  const error = syntaxError(regex)
  if (error !== null) throw new GroupApiError(ErrorCode.INVALID_REGULAR_EXPRESSION, `SubscribedTopicRegex \`${regex}\` is not a valid regular expression: ${error}.`)
}

/**
 * Kafka's `resolveRegularExpressions`: for each regex, the topic names it matches among
 * `topicNames`, without those `mayDescribe` refuses (the member's DESCRIBE on each topic). A
 * regex that does not compile (it was checked when received; never expected) matches nothing.
 */
export function resolveRegularExpressions(regexes: Iterable<string>, topicNames: Iterable<string>, mayDescribe: (topic: string) => boolean, now: number): Map<string, ResolvedRegularExpression> {
  const compiled: Array<[string, RE2JS | null]> = [...regexes].map((regex) => [regex, syntaxError(regex) === null ? RE2JS.compile(regex) : null])
  const matched = new Map<string, Set<string>>(compiled.map(([regex]) => [regex, new Set<string>()]))
  for (const topic of topicNames) {
    for (const [regex, pattern] of compiled) if (pattern?.matches(topic)) matched.get(regex)!.add(topic)
  }
  const denied = new Set<string>()
  for (const topics of matched.values()) for (const t of topics) if (!denied.has(t) && !mayDescribe(t)) denied.add(t)
  const out = new Map<string, ResolvedRegularExpression>()
  for (const [regex, topics] of matched) {
    for (const t of denied) topics.delete(t)
    out.set(regex, { topics, version: -1n, timestamp: now })
  }
  return out
}

/** The same topics. */
export function sameTopics(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((t) => b.has(t))
}
