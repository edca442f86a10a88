/**
 * ACLs as Kafka models them (org.apache.kafka.common.acl and .resource): a `ResourcePattern`
 * (resource type, name, LITERAL or PREFIXED; the name `*` with LITERAL is every resource of the
 * type), an `AccessControlEntry` (principal, host, operation, ALLOW or DENY), and the
 * `AclBinding` of the two; their filters (`ResourcePatternFilter`, `AccessControlEntryFilter`,
 * `AclBindingFilter`) as DescribeAcls and DeleteAcls send them, ANY and MATCH included. The
 * numeric codes are Kafka's wire codes.
 */

/** Kafka's ResourceType codes. */
export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const
export type ResourceType = (typeof ResourceType)[keyof typeof ResourceType]

/** Kafka's PatternType codes: LITERAL and PREFIXED are stored; ANY and MATCH only filter. */
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const
export type PatternType = (typeof PatternType)[keyof typeof PatternType]

/** Kafka's AclOperation codes. */
export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15,
} as const
export type AclOperation = (typeof AclOperation)[keyof typeof AclOperation]

/** Kafka's AclPermissionType codes. */
export const AclPermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const
export type AclPermissionType = (typeof AclPermissionType)[keyof typeof AclPermissionType]

/** The name of a LITERAL pattern that matches every resource of its type, and of a host or principal name that matches any. */
export const WILDCARD = '*'
/** The principal that matches every principal (`User:*`). */
export const WILDCARD_PRINCIPAL = 'User:*'
/** The one CLUSTER resource's name. */
export const CLUSTER_NAME = 'kafka-cluster'

export interface ResourcePattern {
  readonly resourceType: ResourceType
  readonly name: string
  readonly patternType: PatternType
}

export interface AccessControlEntry {
  /** `User:alice`, or `User:*`. */
  readonly principal: string
  /** An IP address, or `*`. */
  readonly host: string
  readonly operation: AclOperation
  readonly permissionType: AclPermissionType
}

export interface AclBinding {
  readonly pattern: ResourcePattern
  readonly entry: AccessControlEntry
}

/** A filter of patterns: ANY resource type or pattern type; a null name matches any; MATCH finds the patterns that apply to a resource. */
export interface ResourcePatternFilter {
  readonly resourceType: ResourceType
  readonly name: string | null
  readonly patternType: PatternType
}

/** A filter of entries: null principal or host, ANY operation or permission match any. */
export interface AccessControlEntryFilter {
  readonly principal: string | null
  readonly host: string | null
  readonly operation: AclOperation
  readonly permissionType: AclPermissionType
}

export interface AclBindingFilter {
  readonly patternFilter: ResourcePatternFilter
  readonly entryFilter: AccessControlEntryFilter
}

const names = <T extends Record<string, number>>(codes: T): Map<number, string> => new Map(Object.entries(codes).map(([n, c]) => [c, n]))
const RESOURCE_TYPE_NAMES = names(ResourceType)
const PATTERN_TYPE_NAMES = names(PatternType)
const OPERATION_NAMES = names(AclOperation)
const PERMISSION_NAMES = names(AclPermissionType)

export const resourceTypeName = (code: number): string => RESOURCE_TYPE_NAMES.get(code) ?? 'UNKNOWN'
export const patternTypeName = (code: number): string => PATTERN_TYPE_NAMES.get(code) ?? 'UNKNOWN'
export const operationName = (code: number): string => OPERATION_NAMES.get(code) ?? 'UNKNOWN'
export const permissionTypeName = (code: number): string => PERMISSION_NAMES.get(code) ?? 'UNKNOWN'

/** A code Kafka does not know reads as UNKNOWN (as Kafka's `fromCode`). */
export const toResourceType = (code: number): ResourceType => (RESOURCE_TYPE_NAMES.has(code) ? (code as ResourceType) : ResourceType.UNKNOWN)
export const toPatternType = (code: number): PatternType => (PATTERN_TYPE_NAMES.has(code) ? (code as PatternType) : PatternType.UNKNOWN)
export const toOperation = (code: number): AclOperation => (OPERATION_NAMES.has(code) ? (code as AclOperation) : AclOperation.UNKNOWN)
export const toPermissionType = (code: number): AclPermissionType => (PERMISSION_NAMES.has(code) ? (code as AclPermissionType) : AclPermissionType.UNKNOWN)

/** Kafka's ResourcePatternFilter.matches. */
export function patternFilterMatches(filter: ResourcePatternFilter, pattern: ResourcePattern): boolean {
  if (filter.resourceType !== ResourceType.ANY && filter.resourceType !== pattern.resourceType) return false
  if (filter.patternType !== PatternType.ANY && filter.patternType !== PatternType.MATCH && filter.patternType !== pattern.patternType) return false
  if (filter.name === null) return true
  if (filter.patternType === PatternType.ANY || filter.patternType === pattern.patternType) return filter.name === pattern.name
  if (pattern.patternType === PatternType.LITERAL) return filter.name === pattern.name || pattern.name === WILDCARD
  return filter.name.startsWith(pattern.name)
}

/** Kafka's AccessControlEntryFilter.matches. */
export function entryFilterMatches(filter: AccessControlEntryFilter, entry: AccessControlEntry): boolean {
  if (filter.principal !== null && filter.principal !== entry.principal) return false
  if (filter.host !== null && filter.host !== entry.host) return false
  if (filter.operation !== AclOperation.ANY && filter.operation !== entry.operation) return false
  return filter.permissionType === AclPermissionType.ANY || filter.permissionType === entry.permissionType
}

export function bindingFilterMatches(filter: AclBindingFilter, binding: AclBinding): boolean {
  return patternFilterMatches(filter.patternFilter, binding.pattern) && entryFilterMatches(filter.entryFilter, binding.entry)
}

/** Why a filter cannot be used (Kafka's `isUnknown`: a field is UNKNOWN), or null. */
export function invalidFilter(filter: AclBindingFilter): string | null {
  const p = filter.patternFilter
  const e = filter.entryFilter
  if (p.resourceType === ResourceType.UNKNOWN || p.patternType === PatternType.UNKNOWN) return 'Unknown patternFilter.'
  if (e.operation === AclOperation.UNKNOWN || e.permissionType === AclPermissionType.UNKNOWN) return 'Unknown entryFilter.'
  return null
}

/** Why an ACL cannot be created (Kafka's AclApis and AclControlManager.validateNewAcl), or null. */
export function invalidBinding(binding: AclBinding): string | null {
  const { pattern, entry } = binding
  if (pattern.resourceType === ResourceType.CLUSTER && pattern.name !== CLUSTER_NAME) return `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`
  if (pattern.name === '') return 'Invalid empty resource name'
  if (pattern.resourceType === ResourceType.UNKNOWN || pattern.resourceType === ResourceType.ANY) return `Invalid resourceType ${resourceTypeName(pattern.resourceType)}`
  if (pattern.patternType !== PatternType.LITERAL && pattern.patternType !== PatternType.PREFIXED) return `Invalid patternType ${patternTypeName(pattern.patternType)}`
  if (entry.operation === AclOperation.UNKNOWN || entry.operation === AclOperation.ANY) return `Invalid operation ${operationName(entry.operation)}`
  if (entry.permissionType !== AclPermissionType.ALLOW && entry.permissionType !== AclPermissionType.DENY) return `Invalid permissionType ${permissionTypeName(entry.permissionType)}`
  if (entry.principal.indexOf(':') <= 0) return `Could not parse principal from \`${entry.principal}\` (no colon is present separating the principal type from the principal name)`
  return null
}

/** One string per binding, for sets and logs: `TOPIC:LITERAL:foo User:alice * READ ALLOW`. */
export function bindingKey(binding: AclBinding): string {
  const { pattern: p, entry: e } = binding
  return JSON.stringify([p.resourceType, p.patternType, p.name, e.principal, e.host, e.operation, e.permissionType])
}

/** Kafka's AclBinding.toString, for log lines and errors. */
export function formatBinding(binding: AclBinding): string {
  const { pattern: p, entry: e } = binding
  return (
    `(pattern=ResourcePattern(resourceType=${resourceTypeName(p.resourceType)}, name=${p.name}, patternType=${patternTypeName(p.patternType)}), ` +
    `entry=(principal=${e.principal}, host=${e.host}, operation=${operationName(e.operation)}, permissionType=${permissionTypeName(e.permissionType)}))`
  )
}
