/**
 * DescribeClientQuotas: ferrolog sets and enforces no client quotas (AlterClientQuotas is not
 * served), so every valid filter matches nothing and the answer is no entries. The filter is
 * still validated as Kafka's ClientQuotasImage.describe validates it, with its errors and
 * messages: an empty or repeated entity type and a match string where the match type wants none
 * (or none where it wants one) are INVALID_REQUEST, as is an IP component beside a user or
 * client-id one; an entity type other than `user`, `client-id` and `ip` is UNSUPPORTED_VERSION.
 * Served so that kafka-configs.sh --describe --entity-type users, which asks for quotas before the
 * SCRAM credentials, works.
 *
 * Authorization (Kafka's KafkaApis): DESCRIBE_CONFIGS on the CLUSTER resource, else
 * CLUSTER_AUTHORIZATION_FAILED. The authorizer plugs in here.
 */
import { MatchType, type DescribeClientQuotasRequest, type DescribeClientQuotasResponse } from '../../protocol/apis/describe-client-quotas.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { ApiHandler } from '../kafka-apis.js'

const USER = 'user'
const CLIENT_ID = 'client-id'
const IP = 'ip'

/** Kafka's validation of the filter: the error it would answer, or null. */
function validateFilter(request: DescribeClientQuotasRequest): { errorCode: number; errorMessage: string } | null {
  const invalid = (errorMessage: string) => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage })
  const seen = new Set<string>()
  for (const c of request.components) {
    if (c.entityType === '') return invalid('Invalid empty entity type.')
    if (seen.has(c.entityType)) return invalid(`Entity type ${c.entityType} cannot appear more than once in the filter.`)
    if (c.entityType !== IP && c.entityType !== USER && c.entityType !== CLIENT_ID) {
      return { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: `Unsupported entity type ${c.entityType}` }
    }
    if (c.matchType === MatchType.EXACT) {
      if (c.match === null) return invalid('Request specified MATCH_TYPE_EXACT, but set match string to null.')
    } else if (c.matchType === MatchType.DEFAULT) {
      if (c.match !== null) return invalid('Request specified MATCH_TYPE_DEFAULT, but also specified a match string.')
    } else if (c.matchType === MatchType.SPECIFIED) {
      if (c.match !== null) return invalid('Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.')
    } else {
      return invalid(`Unknown match type ${c.matchType}`)
    }
    seen.add(c.entityType)
  }
  if (seen.has(IP) && (seen.has(USER) || seen.has(CLIENT_ID))) {
    return invalid('Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.')
  }
  return null
}

export function describeClientQuotasHandler(): ApiHandler<DescribeClientQuotasRequest, DescribeClientQuotasResponse> {
  return (request) => {
    const error = validateFilter(request)
    if (error) return { throttleTimeMs: 0, ...error, entries: null }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, entries: [] }
  }
}
