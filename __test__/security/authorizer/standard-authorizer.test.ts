/**
 * StandardAuthorizer's decisions, case by case as Kafka's StandardAuthorizerTest and
 * AuthorizerTest state them (distinct principals and hosts here: the broker's PLAINTEXT
 * connections are all User:ANONYMOUS), and its ACLs kept in the data dir across restarts.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FileAclStorage, ACLS_FILE } from '../../../ts/server/acl-file-store.js'
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType, type AclBinding, type AclBindingFilter } from '../../../ts/security/authorizer/acl.js'
import { StandardAuthorizer, type AclStorage } from '../../../ts/security/authorizer/standard-authorizer.js'
import { userPrincipal } from '../../../ts/security/kafka-principal.js'
import { tempDir } from '../../helpers/tmp.js'

/** ACLs in memory: the storage interface without a file. */
function memory(initial: AclBinding[] = []): AclStorage {
  let acls = initial
  return {
    load: async () => acls,
    update: async (change) => (acls = change(acls)),
  }
}

const acl = (resourceType: ResourceType, name: string, patternType: PatternType, principal: string, operation: Op, permission: 'ALLOW' | 'DENY' = 'ALLOW', host = '*'): AclBinding => ({
  pattern: { resourceType, name, patternType },
  entry: { principal, host, operation, permissionType: permission === 'ALLOW' ? AclPermissionType.ALLOW : AclPermissionType.DENY },
})
const topic = (name: string, principal: string, operation: Op, permission: 'ALLOW' | 'DENY' = 'ALLOW', host = '*') =>
  acl(ResourceType.TOPIC, name, PatternType.LITERAL, principal, operation, permission, host)
const prefixed = (name: string, principal: string, operation: Op, permission: 'ALLOW' | 'DENY' = 'ALLOW') => acl(ResourceType.TOPIC, name, PatternType.PREFIXED, principal, operation, permission)

const alice = { principal: userPrincipal('alice'), clientAddress: '127.0.0.1' }
const bob = { principal: userPrincipal('bob'), clientAddress: '127.0.0.1' }

async function authorizer(acls: AclBinding[], options: { superUsers?: string; allowEveryoneIfNoAclFound?: boolean } = {}): Promise<StandardAuthorizer> {
  const a = await StandardAuthorizer.load({ storage: memory(), ...options })
  expect((await a.createAcls(acls)).every((r) => r.error === null)).toBe(true)
  return a
}

const ANY_FILTER: AclBindingFilter = {
  patternFilter: { resourceType: ResourceType.ANY, name: null, patternType: PatternType.ANY },
  entryFilter: { principal: null, host: null, operation: Op.ANY, permissionType: AclPermissionType.ANY },
}

describe('StandardAuthorizer', () => {
  it('denies a resource no ACL names, unless allow.everyone.if.no.acl.found', async () => {
    expect((await authorizer([])).authorize(alice, Op.READ, ResourceType.TOPIC, 't')).toBe(false)
    expect((await authorizer([], { allowEveryoneIfNoAclFound: true })).authorize(alice, Op.READ, ResourceType.TOPIC, 't')).toBe(true)
  })

  it('a resource with ACLs for someone else is denied, allow.everyone.if.no.acl.found or not', async () => {
    const a = await authorizer([topic('t', 'User:bob', Op.READ)], { allowEveryoneIfNoAclFound: true })
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 't')).toBe(false)
    expect(a.authorize(bob, Op.READ, ResourceType.TOPIC, 't')).toBe(true)
    // Another topic has none: open to all.
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'other')).toBe(true)
  })

  it('super users may do anything, DENY ACLs or not', async () => {
    const a = await authorizer([topic('t', 'User:alice', Op.ALL, 'DENY')], { superUsers: ' User:bob ; User:alice;' })
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 't')).toBe(true)
    expect(a.authorize(alice, Op.ALTER, ResourceType.CLUSTER, 'kafka-cluster')).toBe(true)
    expect(a.isSuperUser(userPrincipal('carol'))).toBe(false)
  })

  it('READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS; nothing else is implied', async () => {
    for (const op of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
      const a = await authorizer([topic('t', 'User:alice', op)])
      expect(a.authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 't')).toBe(true)
      expect(a.authorize(alice, Op.DESCRIBE_CONFIGS, ResourceType.TOPIC, 't')).toBe(false)
    }
    const c = await authorizer([topic('t', 'User:alice', Op.ALTER_CONFIGS)])
    expect(c.authorize(alice, Op.DESCRIBE_CONFIGS, ResourceType.TOPIC, 't')).toBe(true)
    expect(c.authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 't')).toBe(false)
    const r = await authorizer([topic('t', 'User:alice', Op.READ)])
    expect(r.authorize(alice, Op.WRITE, ResourceType.TOPIC, 't')).toBe(false)
  })

  it('DENY wins over ALLOW, but a DENY of READ does not deny the DESCRIBE an ALLOW ALL implies', async () => {
    const a = await authorizer([topic('t', 'User:alice', Op.ALL), topic('t', 'User:alice', Op.READ, 'DENY')])
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 't')).toBe(false)
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 't')).toBe(true)
    expect(a.authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 't')).toBe(true)
    // A DENY in a PREFIXED ACL beats a LITERAL ALLOW, and a wildcard DENY beats everything.
    const p = await authorizer([topic('foobar', 'User:alice', Op.READ), prefixed('foo', 'User:alice', Op.READ, 'DENY')])
    expect(p.authorize(alice, Op.READ, ResourceType.TOPIC, 'foobar')).toBe(false)
    const w = await authorizer([topic('t', 'User:alice', Op.READ), topic('*', 'User:*', Op.READ, 'DENY')])
    expect(w.authorize(alice, Op.READ, ResourceType.TOPIC, 't')).toBe(false)
  })

  it('PREFIXED ACLs match names that start with the prefix; LITERAL ones only the name; * every name', async () => {
    const a = await authorizer([prefixed('foo', 'User:alice', Op.READ), topic('bar', 'User:alice', Op.READ), topic('*', 'User:bob', Op.WRITE)])
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'foo')).toBe(true)
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'foobar')).toBe(true)
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'fo')).toBe(false)
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'barx')).toBe(false)
    expect(a.authorize(bob, Op.WRITE, ResourceType.TOPIC, 'anything')).toBe(true)
    // More PREFIXED ACLs than the name has characters: looked up by the name's prefixes.
    const many = await authorizer([
      ...Array.from({ length: 20 }, (_, i) => prefixed(`other-${i}`, 'User:alice', Op.READ)),
      prefixed('ab', 'User:alice', Op.WRITE, 'DENY'),
      prefixed('a', 'User:alice', Op.WRITE),
    ])
    expect(many.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'a')).toBe(true)
    expect(many.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'abc')).toBe(false)
    expect(many.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'ax')).toBe(true)
    expect(many.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'b')).toBe(false)
    // Resource types are separate: a TOPIC ACL says nothing of a GROUP of that name.
    expect(a.authorize(alice, Op.READ, ResourceType.GROUP, 'foo')).toBe(false)
  })

  it('User:* matches every principal; a host other than * only that address', async () => {
    const a = await authorizer([topic('t', 'User:*', Op.READ), topic('h', 'User:alice', Op.READ, 'ALLOW', '10.0.0.1')])
    expect(a.authorize(bob, Op.READ, ResourceType.TOPIC, 't')).toBe(true)
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'h')).toBe(false)
    expect(a.authorize({ ...alice, clientAddress: '10.0.0.1' }, Op.READ, ResourceType.TOPIC, 'h')).toBe(true)
    // As Kafka's matchingPrincipals: User:* matches a principal of any type.
    expect(a.authorize({ principal: { principalType: 'Group', name: 'x' }, clientAddress: '127.0.0.1' }, Op.READ, ResourceType.TOPIC, 't')).toBe(true)
  })

  it('authorizeByResourceType: an ALLOW on some resource of the type not covered by a DENY', async () => {
    expect((await authorizer([prefixed('t', 'User:alice', Op.WRITE)])).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true)
    expect((await authorizer([topic('t', 'User:alice', Op.READ)])).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false)
    expect((await authorizer([topic('ab', 'User:alice', Op.WRITE), prefixed('a', 'User:alice', Op.WRITE, 'DENY')])).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false)
    expect((await authorizer([topic('ab', 'User:alice', Op.WRITE), topic('ab', 'User:alice', Op.WRITE, 'DENY')])).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false)
    expect((await authorizer([topic('ab', 'User:alice', Op.WRITE), topic('ac', 'User:alice', Op.WRITE, 'DENY')])).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true)
    expect((await authorizer([topic('*', 'User:*', Op.ALL)])).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true)
    expect((await authorizer([topic('x', 'User:*', Op.ALL), topic('*', 'User:alice', Op.WRITE, 'DENY')])).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false)
    expect((await authorizer([], { superUsers: 'User:alice' })).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true)
  })

  it("authorizedOperations (KIP-430) is the bit field of the resource type's allowed operations", async () => {
    const a = await authorizer([topic('t', 'User:alice', Op.READ)])
    expect(a.authorizedOperations(alice, ResourceType.TOPIC, 't')).toBe((1 << Op.READ) | (1 << Op.DESCRIBE))
    expect(a.authorizedOperations(bob, ResourceType.TOPIC, 't')).toBe(0)
  })

  it('CreateAcls refuses what Kafka refuses; a binding created twice is stored once', async () => {
    const a = await authorizer([])
    const results = await a.createAcls([
      acl(ResourceType.CLUSTER, 'my-cluster', PatternType.LITERAL, 'User:alice', Op.ALTER),
      topic('', 'User:alice', Op.READ),
      acl(ResourceType.TOPIC, 't', PatternType.MATCH, 'User:alice', Op.READ),
      topic('t', 'User:alice', Op.ANY),
      topic('t', 'alice', Op.READ),
      topic('t', 'User:alice', Op.READ),
      topic('t', 'User:alice', Op.READ),
    ])
    expect(results.map((r) => r.error)).toEqual([
      'The only valid name for the CLUSTER resource is kafka-cluster',
      'Invalid empty resource name',
      'Invalid patternType MATCH',
      'Invalid operation ANY',
      'Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)',
      null,
      null,
    ])
    expect(a.acls(ANY_FILTER)).toEqual([topic('t', 'User:alice', Op.READ)])
  })

  it('filters: MATCH finds the LITERAL, wildcard and PREFIXED ACLs that apply to a name; DeleteAcls removes what each filter matches', async () => {
    const a = await authorizer([topic('foobar', 'User:alice', Op.READ), topic('*', 'User:bob', Op.READ), prefixed('foo', 'User:bob', Op.WRITE), prefixed('bar', 'User:bob', Op.WRITE)])
    const match: AclBindingFilter = { ...ANY_FILTER, patternFilter: { resourceType: ResourceType.TOPIC, name: 'foobar', patternType: PatternType.MATCH } }
    expect(a.acls(match)).toHaveLength(3)
    const literal: AclBindingFilter = { ...ANY_FILTER, patternFilter: { resourceType: ResourceType.TOPIC, name: 'foo', patternType: PatternType.LITERAL } }
    expect(a.acls(literal)).toHaveLength(0)
    const [deleted, none] = await a.deleteAcls([{ ...ANY_FILTER, entryFilter: { ...ANY_FILTER.entryFilter, principal: 'User:bob' } }, literal])
    expect(deleted.deleted).toHaveLength(3)
    expect(none.deleted).toEqual([])
    expect(a.acls(ANY_FILTER)).toEqual([topic('foobar', 'User:alice', Op.READ)])
    const [bad] = await a.deleteAcls([{ ...ANY_FILTER, entryFilter: { ...ANY_FILTER.entryFilter, operation: Op.UNKNOWN } }])
    expect(bad.error).toBe('Unknown entryFilter.')
  })

  it('keeps its ACLs in the data dir: a new instance enforces them; a damaged file refuses the start', async () => {
    const dir = tempDir()
    const first = await StandardAuthorizer.load({ storage: new FileAclStorage(dir) })
    await first.createAcls([topic('t', 'User:alice', Op.READ), prefixed('p-', 'User:bob', Op.WRITE, 'DENY')])
    expect(JSON.parse(readFileSync(join(dir, ACLS_FILE), 'utf8')).acls[1]).toEqual({
      resourceType: 'TOPIC',
      name: 'p-',
      patternType: 'PREFIXED',
      principal: 'User:bob',
      host: '*',
      operation: 'WRITE',
      permissionType: 'DENY',
    })
    const second = await StandardAuthorizer.load({ storage: new FileAclStorage(dir) })
    expect(second.authorize(alice, Op.READ, ResourceType.TOPIC, 't')).toBe(true)
    expect(second.acls(ANY_FILTER)).toEqual(first.acls(ANY_FILTER))
    writeFileSync(join(dir, ACLS_FILE), '{"version":1,"acls":[{"resourceType":"TOPIK"}]}')
    await expect(StandardAuthorizer.load({ storage: new FileAclStorage(dir) })).rejects.toThrow(/unknown resourceType "TOPIK"/)
  })
})
