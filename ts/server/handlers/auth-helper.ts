/**
 * AuthHelper (Kafka's kafka.server.AuthHelper): how handlers ask the authorizer, with the
 * request's principal (`connection.principal`) and client address. Without an authorizer
 * (authorizer.class.name empty) everything is allowed and every operation is reported as
 * authorized (KIP-430), as Kafka does.
 */
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../security/authorizer/acl.js'
import { SUPPORTED_OPERATIONS, type AuthorizableRequestContext, type StandardAuthorizer } from '../../security/authorizer/standard-authorizer.js'
import type { RequestContext } from '../kafka-apis.js'
import { ConfigResourceType } from '../../protocol/apis/describe-configs.js'
import { ErrorCode } from '../../protocol/error-codes.js'

function requestContext(context: RequestContext): AuthorizableRequestContext {
  return { principal: context.connection.principal, clientAddress: context.connection.clientAddress }
}

export class AuthHelper {
  private readonly authorizer: () => StandardAuthorizer | null

  /** `authorizer`: read at each check (the broker loads its authorizer after building its handlers). */
  constructor(authorizer: () => StandardAuthorizer | null) {
    this.authorizer = authorizer
  }

  authorize(context: RequestContext, operation: AclOperation, resourceType: ResourceType, name: string): boolean {
    const authorizer = this.authorizer()
    return authorizer === null || authorizer.authorize(requestContext(context), operation, resourceType, name)
  }

  authorizeCluster(context: RequestContext, operation: AclOperation): boolean {
    return this.authorize(context, operation, ResourceType.CLUSTER, CLUSTER_NAME)
  }

  /** The names of `names` the request may perform `operation` on (each asked once). */
  filterByAuthorized(context: RequestContext, operation: AclOperation, resourceType: ResourceType, names: Iterable<string>): Set<string> {
    const allowed = new Set<string>()
    const asked = new Set<string>()
    for (const name of names) {
      if (asked.has(name)) continue
      asked.add(name)
      if (this.authorize(context, operation, resourceType, name)) allowed.add(name)
    }
    return allowed
  }

  authorizeByResourceType(context: RequestContext, operation: AclOperation, resourceType: ResourceType): boolean {
    const authorizer = this.authorizer()
    return authorizer === null || authorizer.authorizeByResourceType(requestContext(context), operation, resourceType)
  }

  /**
   * Kafka's authorization of a config resource (DescribeConfigs, AlterConfigs,
   * IncrementalAlterConfigs): `operation` (DESCRIBE_CONFIGS or ALTER_CONFIGS) on the topic, the
   * group, or the cluster for a broker or broker logger; the error if refused, else NONE.
   */
  configResourceError(context: RequestContext, operation: AclOperation, configResourceType: number, name: string): number {
    switch (configResourceType) {
      case ConfigResourceType.TOPIC:
        return this.authorize(context, operation, ResourceType.TOPIC, name) ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED
      case ConfigResourceType.GROUP:
        return this.authorize(context, operation, ResourceType.GROUP, name) ? ErrorCode.NONE : ErrorCode.GROUP_AUTHORIZATION_FAILED
      default:
        return this.authorizeCluster(context, operation) ? ErrorCode.NONE : ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    }
  }

  /** KIP-430: the bit field of the resource's operations the request may perform. */
  authorizedOperations(context: RequestContext, resourceType: ResourceType, name: string): number {
    const authorizer = this.authorizer()
    if (authorizer !== null) return authorizer.authorizedOperations(requestContext(context), resourceType, name)
    let bits = 0
    for (const operation of SUPPORTED_OPERATIONS[resourceType] ?? []) bits |= 1 << operation
    return bits
  }
}
