/**
 * DeleteAcls (Kafka's AclApis.handleDeleteAcls): every ACL each filter matches is deleted and
 * listed in that filter's result, answered once durable. Needs ALTER on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED on every filter); without an authorizer SECURITY_DISABLED; a
 * filter with an UNKNOWN field INVALID_REQUEST.
 */
import type { DeleteAclsRequest, DeleteAclsResponse } from '../../protocol/apis/delete-acls.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation, toOperation, toPatternType, toPermissionType, toResourceType, type AclBindingFilter } from '../../security/authorizer/acl.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function deleteAclsHandler(broker: BrokerContext): ApiHandler<DeleteAclsRequest, DeleteAclsResponse> {
  return async (request, context) => {
    const all = (errorCode: number, errorMessage: string): DeleteAclsResponse => ({
      throttleTimeMs: 0,
      filterResults: request.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
    })
    if (!broker.auth.authorizeCluster(context, AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.')
    const authorizer = broker.authorizer
    if (authorizer === null) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.')
    const filters: AclBindingFilter[] = request.filters.map((f) => ({
      patternFilter: { resourceType: toResourceType(f.resourceTypeFilter), name: f.resourceNameFilter, patternType: toPatternType(f.patternTypeFilter) },
      entryFilter: { principal: f.principalFilter, host: f.hostFilter, operation: toOperation(f.operation), permissionType: toPermissionType(f.permissionType) },
    }))
    const results = await authorizer.deleteAcls(filters)
    return {
      throttleTimeMs: 0,
      filterResults: results.map((r) =>
        r.error !== null
          ? { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: r.error, matchingAcls: [] }
          : {
              errorCode: ErrorCode.NONE,
              errorMessage: null,
              matchingAcls: r.deleted.map(({ pattern, entry }) => ({
                errorCode: ErrorCode.NONE,
                errorMessage: null,
                resourceType: pattern.resourceType,
                resourceName: pattern.name,
                patternType: pattern.patternType,
                principal: entry.principal,
                host: entry.host,
                operation: entry.operation,
                permissionType: entry.permissionType,
              })),
            },
      ),
    }
  }
}
