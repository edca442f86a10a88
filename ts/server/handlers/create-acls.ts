/**
 * CreateAcls (Kafka's AclApis.handleCreateAcls): each ACL created, answered once durable (one
 * that exists already is left as it is and answered NONE). Needs ALTER on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED on every creation); without an authorizer SECURITY_DISABLED; an
 * ACL Kafka refuses (a CLUSTER not named kafka-cluster, an empty name, ANY or UNKNOWN fields, a
 * MATCH pattern, a principal without a type) INVALID_REQUEST with Kafka's message.
 */
import type { CreateAclsRequest, CreateAclsResponse } from '../../protocol/apis/create-acls.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation, toOperation, toPatternType, toPermissionType, toResourceType, type AclBinding } from '../../security/authorizer/acl.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function createAclsHandler(broker: BrokerContext): ApiHandler<CreateAclsRequest, CreateAclsResponse> {
  return async (request, context) => {
    const all = (errorCode: number, errorMessage: string): CreateAclsResponse => ({ throttleTimeMs: 0, results: request.creations.map(() => ({ errorCode, errorMessage })) })
    if (!broker.auth.authorizeCluster(context, AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.')
    const authorizer = broker.authorizer
    if (authorizer === null) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.')
    const bindings: AclBinding[] = request.creations.map((c) => ({
      pattern: { resourceType: toResourceType(c.resourceType), name: c.resourceName, patternType: toPatternType(c.resourcePatternType) },
      entry: { principal: c.principal, host: c.host, operation: toOperation(c.operation), permissionType: toPermissionType(c.permissionType) },
    }))
    const results = await authorizer.createAcls(bindings)
    broker.logger.info('created ACLs', { principal: `${context.connection.principal.principalType}:${context.connection.principal.name}`, count: results.filter((r) => r.error === null).length })
    return {
      throttleTimeMs: 0,
      results: results.map((r) => (r.error === null ? { errorCode: ErrorCode.NONE, errorMessage: '' } : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: r.error })),
    }
  }
}
