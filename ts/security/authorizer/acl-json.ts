/**
 * The stored form of a set of ACLs, shared by a standalone broker's file
 * (`<dataDir>/ferrolog-acls.json`, ts/server/acl-file-store.ts) and a cluster's etcd key
 * (ts/cluster/acl-store.ts): Kafka's enum names, not codes, so that a person can read and repair
 * it.
 *
 *   { "version": 1, "acls": [
 *       { "resourceType": "TOPIC", "name": "orders", "patternType": "LITERAL",
 *         "principal": "User:alice", "host": "*", "operation": "READ", "permissionType": "ALLOW" } ] }
 *
 * Anything else (another version, an unknown name, a missing field, an ACL Kafka would refuse)
 * is an `AclFormatError`: the broker refuses to start rather than enforce a set it misread.
 */
import { AclOperation, AclPermissionType, PatternType, ResourceType, invalidBinding, operationName, patternTypeName, permissionTypeName, resourceTypeName, type AclBinding } from './acl.js'

export const ACLS_FORMAT_VERSION = 1

export class AclFormatError extends Error {
  readonly code = 'ACL_FORMAT_ERROR'
}

interface StoredAcl {
  resourceType: string
  name: string
  patternType: string
  principal: string
  host: string
  operation: string
  permissionType: string
}

export function formatAcls(acls: readonly AclBinding[]): string {
  const stored: StoredAcl[] = acls.map(({ pattern: p, entry: e }) => ({
    resourceType: resourceTypeName(p.resourceType),
    name: p.name,
    patternType: patternTypeName(p.patternType),
    principal: e.principal,
    host: e.host,
    operation: operationName(e.operation),
    permissionType: permissionTypeName(e.permissionType),
  }))
  return JSON.stringify({ version: ACLS_FORMAT_VERSION, acls: stored }, null, 2) + '\n'
}

function code<T extends Record<string, number>>(codes: T, name: unknown, what: string): T[keyof T] {
  if (typeof name !== 'string' || !Object.hasOwn(codes, name)) throw new AclFormatError(`unknown ${what} ${JSON.stringify(name)}`)
  return codes[name as keyof T]
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new AclFormatError(`${what} must be a string`)
  return value
}

/** Parses `formatAcls`' output; `source` names the file or key in errors. */
export function parseAcls(json: string, source: string): AclBinding[] {
  let parsed: { version?: unknown; acls?: unknown }
  try {
    parsed = JSON.parse(json) as typeof parsed
  } catch (err) {
    throw new AclFormatError(`${source} is not JSON: ${(err as Error).message}`)
  }
  if (typeof parsed !== 'object' || parsed === null || parsed.version !== ACLS_FORMAT_VERSION || !Array.isArray(parsed.acls)) {
    throw new AclFormatError(`${source} is not a version ${ACLS_FORMAT_VERSION} ACL set ({ "version": 1, "acls": [...] })`)
  }
  return parsed.acls.map((a: Partial<StoredAcl>, i: number) => {
    try {
      const binding: AclBinding = {
        pattern: { resourceType: code(ResourceType, a.resourceType, 'resourceType'), name: text(a.name, 'name'), patternType: code(PatternType, a.patternType, 'patternType') },
        entry: {
          principal: text(a.principal, 'principal'),
          host: text(a.host, 'host'),
          operation: code(AclOperation, a.operation, 'operation'),
          permissionType: code(AclPermissionType, a.permissionType, 'permissionType'),
        },
      }
      const invalid = invalidBinding(binding)
      if (invalid) throw new AclFormatError(invalid)
      return binding
    } catch (err) {
      throw new AclFormatError(`${source}: ACL ${i}: ${(err as Error).message}`)
    }
  })
}
