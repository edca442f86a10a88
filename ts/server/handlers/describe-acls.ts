/**
 * DescribeAcls (Kafka's AclApis.handleDescribeAcls): the ACLs the filter matches, grouped by
 * resource pattern. Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED); without an
 * authorizer SECURITY_DISABLED; an UNKNOWN field in the filter INVALID_REQUEST.
 */
import type { DescribeAclsRequest, DescribeAclsResponse } from '../../protocol/apis/describe-acls.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation, bindingKey, invalidFilter, toOperation, toPatternType, toPermissionType, toResourceType, type AclBinding, type AclBindingFilter } from '../../security/authorizer/acl.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function describeAclsHandler(broker: BrokerContext): ApiHandler<DescribeAclsRequest, DescribeAclsResponse> {
  return (request, context) => {
    const fail = (errorCode: number, errorMessage: string): DescribeAclsResponse => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] })
    if (!broker.auth.authorizeCluster(context, AclOperation.DESCRIBE)) return fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.')
    const authorizer = broker.authorizer
    if (authorizer === null) return fail(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured on the broker')
    const filter: AclBindingFilter = {
      patternFilter: { resourceType: toResourceType(request.resourceTypeFilter), name: request.resourceNameFilter, patternType: toPatternType(request.patternTypeFilter) },
      entryFilter: { principal: request.principalFilter, host: request.hostFilter, operation: toOperation(request.operation), permissionType: toPermissionType(request.permissionType) },
    }
    const invalid = invalidFilter(filter)
    if (invalid) return fail(ErrorCode.INVALID_REQUEST, invalid)
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: '', resources: byPattern(authorizer.acls(filter)) }
  }
}

/** Kafka's DescribeAclsResponse.aclsResources: one resource per pattern, with its entries. */
function byPattern(acls: AclBinding[]): DescribeAclsResponse['resources'] {
  const resources = new Map<string, DescribeAclsResponse['resources'][number]>()
  for (const { pattern, entry } of acls) {
    const key = bindingKey({ pattern, entry: { principal: '', host: '', operation: 0, permissionType: 0 } })
    let resource = resources.get(key)
    if (!resource) resources.set(key, (resource = { resourceType: pattern.resourceType, resourceName: pattern.name, patternType: pattern.patternType, acls: [] }))
    resource.acls.push({ principal: entry.principal, host: entry.host, operation: entry.operation, permissionType: entry.permissionType })
  }
  return [...resources.values()]
}
