/**
 * StandardAuthorizer (Kafka's org.apache.kafka.metadata.authorizer.StandardAuthorizer and its
 * StandardAuthorizerData): decides whether a principal, from a host, may perform an operation
 * on a resource, from the ACLs, `super.users` and `allow.everyone.if.no.acl.found`.
 *
 * The rules, as Kafka's:
 * - a super user (`super.users`, `User:alice;User:bob`) may do anything, whatever the ACLs;
 * - the ACLs that apply to a resource are its LITERAL ones, the LITERAL `*` of its type, and the
 *   PREFIXED ones whose name starts the resource's name;
 * - an ACL matches when its principal is the request's or `User:*`, its host the client's address
 *   or `*`, and its operation the one asked or ALL; an ALLOW of READ, WRITE, DELETE or ALTER also
 *   allows DESCRIBE, and one of ALTER_CONFIGS allows DESCRIBE_CONFIGS (not a DENY: denying READ
 *   does not deny DESCRIBE);
 * - a matching DENY wins over any ALLOW; else a matching ALLOW allows; else, when the resource has
 *   ACLs (for anyone), the answer is no; when it has none, `allow.everyone.if.no.acl.found`.
 *
 * The ACLs live in an `AclStorage` (a file of the data dir for a standalone broker, etcd for a
 * cluster): changes are made there first and applied once durable; a cluster's storage also
 * tells of changes made by other brokers, applied at once.
 */
import type { KafkaPrincipal } from '../kafka-principal.js'
import { principalToString } from '../kafka-principal.js'
import {
  AclOperation,
  AclPermissionType,
  PatternType,
  ResourceType,
  WILDCARD,
  WILDCARD_PRINCIPAL,
  bindingFilterMatches,
  bindingKey,
  invalidBinding,
  invalidFilter,
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
} from './acl.js'

/** Kafka's AuthorizerConfigs name for this authorizer (authorizer.class.name). */
export const STANDARD_AUTHORIZER_CLASS = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer'

/** Who asks, from where (Kafka's AuthorizableRequestContext: principal and client address). */
export interface AuthorizableRequestContext {
  readonly principal: KafkaPrincipal
  readonly clientAddress: string
}

/** Where the ACLs are kept durably. */
export interface AclStorage {
  /** Every stored ACL. */
  load(): Promise<AclBinding[]>
  /**
   * Replaces the stored set by `change(current)`, `current` being the stored set at the time (in
   * a cluster, read again and retried if another broker changed it meanwhile); resolves with the
   * new set once durable.
   */
  update(change: (current: readonly AclBinding[]) => AclBinding[]): Promise<AclBinding[]>
  /** Calls `listener` with the whole new set when it is changed elsewhere (another broker); optional. */
  watch?(listener: (acls: AclBinding[]) => void): void
  close?(): Promise<void>
}

/** One ACL creation's outcome: null, or Kafka's INVALID_REQUEST message. */
export interface AclCreateResult {
  error: string | null
}

/** One DeleteAcls filter's outcome: the ACLs it removed, or why it could not be used. */
export interface AclDeleteResult {
  error: string | null
  deleted: AclBinding[]
}

/** The operations each resource type has (Kafka's AclEntry.supportedOperations), for KIP-430. */
export const SUPPORTED_OPERATIONS: Readonly<Record<number, readonly AclOperation[]>> = {
  [ResourceType.TOPIC]: [
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.CREATE,
    AclOperation.DESCRIBE,
    AclOperation.DELETE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
  ],
  [ResourceType.GROUP]: [AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS],
  [ResourceType.CLUSTER]: [
    AclOperation.CREATE,
    AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
  ],
  [ResourceType.TRANSACTIONAL_ID]: [AclOperation.DESCRIBE, AclOperation.WRITE],
  [ResourceType.DELEGATION_TOKEN]: [AclOperation.DESCRIBE],
  [ResourceType.USER]: [AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS],
}

const IMPLIES_DESCRIBE: ReadonlySet<number> = new Set([AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER])
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<number> = new Set([AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS])

/** Kafka's StandardAuthorizerData.findResult: ALLOW, DENY or no say (null) of one ACL on one request. */
function findResult(entry: AccessControlEntry, principal: string, host: string, operation: AclOperation): 'ALLOW' | 'DENY' | null {
  if (entry.principal !== principal && entry.principal !== WILDCARD_PRINCIPAL) return null
  if (entry.host !== WILDCARD && entry.host !== host) return null
  if (entry.operation !== AclOperation.ALL) {
    if (entry.permissionType === AclPermissionType.ALLOW) {
      if (operation === AclOperation.DESCRIBE) {
        if (!IMPLIES_DESCRIBE.has(entry.operation)) return null
      } else if (operation === AclOperation.DESCRIBE_CONFIGS) {
        if (!IMPLIES_DESCRIBE_CONFIGS.has(entry.operation)) return null
      } else if (operation !== entry.operation) return null
    } else if (operation !== entry.operation) return null
  }
  return entry.permissionType === AclPermissionType.ALLOW ? 'ALLOW' : 'DENY'
}

/** The ACLs of one resource type, indexed for `authorize`. */
interface TypeIndex {
  literal: Map<string, AccessControlEntry[]>
  prefixed: Map<string, AccessControlEntry[]>
}

export interface StandardAuthorizerOptions {
  /** super.users: `User:alice;User:bob`. */
  superUsers?: string
  /** allow.everyone.if.no.acl.found (default false). */
  allowEveryoneIfNoAclFound?: boolean
  storage: AclStorage
}

/** `super.users` as Kafka splits it: on `;`, trimmed, empty parts dropped. */
export function parseSuperUsers(text: string): string[] {
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

export class StandardAuthorizer {
  private readonly superUsers: ReadonlySet<string>
  private readonly allowEveryoneIfNoAclFound: boolean
  private readonly storage: AclStorage
  private bindings: AclBinding[] = []
  private index = new Map<number, TypeIndex>()
  /** Changes, one at a time. */
  private queue: Promise<unknown> = Promise.resolve()

  private constructor(options: StandardAuthorizerOptions) {
    this.superUsers = new Set(parseSuperUsers(options.superUsers ?? ''))
    this.allowEveryoneIfNoAclFound = options.allowEveryoneIfNoAclFound ?? false
    this.storage = options.storage
  }

  /** Loads the stored ACLs and follows changes made elsewhere. */
  static async load(options: StandardAuthorizerOptions): Promise<StandardAuthorizer> {
    const authorizer = new StandardAuthorizer(options)
    authorizer.apply(await options.storage.load())
    options.storage.watch?.((acls) => authorizer.apply(acls))
    return authorizer
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined)
    await this.storage.close?.()
  }

  isSuperUser(principal: KafkaPrincipal): boolean {
    return this.superUsers.has(principalToString(principal))
  }

  /** Whether `context` may perform `operation` on the resource `name` of `resourceType` (a LITERAL resource). */
  authorize(context: AuthorizableRequestContext, operation: AclOperation, resourceType: ResourceType, name: string): boolean {
    if (this.isSuperUser(context.principal)) return true
    const principal = principalToString(context.principal)
    const host = context.clientAddress
    const type = this.index.get(resourceType)
    if (!type) return this.allowEveryoneIfNoAclFound
    let hasResourceAcls = false
    let allowed = false
    const consider = (entries: AccessControlEntry[] | undefined): boolean => {
      if (!entries) return false
      hasResourceAcls = true
      for (const entry of entries) {
        const result = findResult(entry, principal, host, operation)
        if (result === 'DENY') return true
        if (result === 'ALLOW') allowed = true
      }
      return false
    }
    if (consider(type.literal.get(name))) return false
    if (name !== WILDCARD && consider(type.literal.get(WILDCARD))) return false
    // The PREFIXED ACLs whose name starts `name`: by its prefixes or by the ACLs, whichever are fewer.
    if (type.prefixed.size <= name.length) {
      for (const [prefix, entries] of type.prefixed) if (name.startsWith(prefix) && consider(entries)) return false
    } else {
      for (let end = 1; end <= name.length; end++) if (consider(type.prefixed.get(name.slice(0, end)))) return false
    }
    if (allowed) return true
    return hasResourceAcls ? false : this.allowEveryoneIfNoAclFound
  }

  /**
   * Whether `context` may perform `operation` on some resource of the type (Kafka's
   * Authorizer.authorizeByResourceType): an idempotent producer with WRITE on any topic may get
   * a producer id. Super users and `allow.everyone.if.no.acl.found` as `authorize` on a resource
   * no ACL names; else an ALLOW (LITERAL, PREFIXED or `*`) that no DENY of the same or a shorter
   * prefix covers.
   */
  authorizeByResourceType(context: AuthorizableRequestContext, operation: AclOperation, resourceType: ResourceType): boolean {
    if (this.authorize(context, operation, resourceType, 'hardcode')) return true
    const principal = principalToString(context.principal)
    const denyLiteral = new Set<string>()
    const denyPrefixed = new Set<string>()
    const allowLiteral = new Set<string>()
    const allowPrefixed = new Set<string>()
    for (const { pattern, entry } of this.bindings) {
      if (pattern.resourceType !== resourceType) continue
      if (entry.host !== context.clientAddress && entry.host !== WILDCARD) continue
      if (entry.principal !== principal && entry.principal !== WILDCARD_PRINCIPAL) continue
      if (entry.operation !== operation && entry.operation !== AclOperation.ALL) continue
      const literal = pattern.patternType === PatternType.LITERAL
      if (entry.permissionType === AclPermissionType.DENY) {
        if (literal && pattern.name === WILDCARD) return false
        ;(literal ? denyLiteral : denyPrefixed).add(pattern.name)
      } else if (entry.permissionType === AclPermissionType.ALLOW) {
        if (literal && pattern.name === WILDCARD) return true
        ;(literal ? allowLiteral : allowPrefixed).add(pattern.name)
      }
    }
    const dominated = (name: string): boolean => {
      for (let i = 1; i <= name.length; i++) if (denyPrefixed.has(name.slice(0, i))) return true
      return false
    }
    for (const name of allowLiteral) if (!denyLiteral.has(name) && !dominated(name)) return true
    for (const name of allowPrefixed) if (!dominated(name)) return true
    return false
  }

  /** KIP-430: the bit field (1 << operation code) of the resource's operations `context` may perform. */
  authorizedOperations(context: AuthorizableRequestContext, resourceType: ResourceType, name: string): number {
    let bits = 0
    for (const operation of SUPPORTED_OPERATIONS[resourceType] ?? []) if (this.authorize(context, operation, resourceType, name)) bits |= 1 << operation
    return bits
  }

  /** The ACLs `filter` matches, in the order they were created. */
  acls(filter: AclBindingFilter): AclBinding[] {
    return this.bindings.filter((b) => bindingFilterMatches(filter, b))
  }

  /** Creates the valid ones of `bindings` (one already present is left as it is); one result per binding. */
  createAcls(bindings: readonly AclBinding[]): Promise<AclCreateResult[]> {
    const results = bindings.map((b) => ({ error: invalidBinding(b) }))
    const valid = bindings.filter((_, i) => results[i]!.error === null)
    if (valid.length === 0) return Promise.resolve(results)
    return this.change(async () => {
      const next = await this.storage.update((current) => {
        const known = new Set(current.map(bindingKey))
        const added = [...current]
        for (const b of valid) {
          const key = bindingKey(b)
          if (known.has(key)) continue
          known.add(key)
          added.push(canonical(b))
        }
        return added
      })
      this.apply(next)
      return results
    })
  }

  /** Deletes the ACLs each filter matches; one result per filter, with what it removed. */
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]> {
    return this.change(async () => {
      const results: AclDeleteResult[] = filters.map((f) => ({ error: invalidFilter(f), deleted: [] }))
      const next = await this.storage.update((current) => {
        for (const r of results) r.deleted = []
        return current.filter((b) => {
          let matched = false
          filters.forEach((f, i) => {
            if (results[i]!.error === null && bindingFilterMatches(f, b)) {
              results[i]!.deleted.push(b)
              matched = true
            }
          })
          return !matched
        })
      })
      this.apply(next)
      return results
    })
  }

  private change<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run)
    this.queue = next.catch(() => undefined)
    return next
  }

  private apply(acls: AclBinding[]): void {
    const index = new Map<number, TypeIndex>()
    for (const { pattern, entry } of acls) {
      let type = index.get(pattern.resourceType)
      if (!type) index.set(pattern.resourceType, (type = { literal: new Map(), prefixed: new Map() }))
      const byName = pattern.patternType === PatternType.PREFIXED ? type.prefixed : type.literal
      const entries = byName.get(pattern.name)
      if (entries) entries.push(entry)
      else byName.set(pattern.name, [entry])
    }
    this.bindings = acls
    this.index = index
  }
}

/** A binding with only its own fields (a decoded request's object may carry more). */
function canonical(b: AclBinding): AclBinding {
  return {
    pattern: { resourceType: b.pattern.resourceType, name: b.pattern.name, patternType: b.pattern.patternType },
    entry: { principal: b.entry.principal, host: b.entry.host, operation: b.entry.operation, permissionType: b.entry.permissionType },
  }
}
