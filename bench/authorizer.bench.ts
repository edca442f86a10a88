/**
 * The StandardAuthorizer's cost per decision (ts/security/authorizer/standard-authorizer.ts), the
 * price every request pays once per resource: with no ACLs, 100 and 10,000 (LITERAL topics of
 * other principals and PREFIXED ones), and for a super user. Results go to stdout as a table.
 *
 *   node scripts/build.mjs ts && node dist/bench/authorizer.bench.js
 */
import { AclOperation, AclPermissionType, PatternType, ResourceType, type AclBinding } from '../ts/security/authorizer/acl.js'
import { StandardAuthorizer } from '../ts/security/authorizer/standard-authorizer.js'
import { userPrincipal } from '../ts/security/kafka-principal.js'

const BENCH_MS = Number(process.env.BENCH_MS ?? 1000)

function acls(n: number): AclBinding[] {
  return Array.from({ length: n }, (_, i) => ({
    pattern: { resourceType: ResourceType.TOPIC, name: i % 10 === 0 ? `prefix-${i}-` : `topic-${i}`, patternType: i % 10 === 0 ? PatternType.PREFIXED : PatternType.LITERAL },
    entry: { principal: `User:user-${i % 50}`, host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW },
  }))
}

async function authorizer(n: number): Promise<StandardAuthorizer> {
  let stored: AclBinding[] = []
  const a = await StandardAuthorizer.load({ superUsers: 'User:admin', storage: { load: async () => stored, update: async (change) => (stored = change(stored)) } })
  await a.createAcls(acls(n))
  return a
}

async function main(): Promise<void> {
  const { Bench } = await import('tinybench')
  const bench = new Bench({ time: BENCH_MS })
  const user = { principal: userPrincipal('user-7'), clientAddress: '127.0.0.1' }
  const admin = { principal: userPrincipal('admin'), clientAddress: '127.0.0.1' }
  for (const n of [0, 100, 10_000]) {
    const a = await authorizer(n)
    bench.add(`${n} ACLs: READ topic-7`, () => void a.authorize(user, AclOperation.READ, ResourceType.TOPIC, 'topic-7'))
  }
  const big = await authorizer(10_000)
  bench.add('10000 ACLs: super user', () => void big.authorize(admin, AclOperation.READ, ResourceType.TOPIC, 'topic-7'))
  await bench.run()
  console.table(bench.tasks.map((t) => ({ case: t.name, 'ns/decision': t.result && 'period' in t.result ? Math.round(t.result.period * 1e6) : null })))
}

void main()
