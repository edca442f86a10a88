/**
 * The consumer's partition assignors by name (partition.assignment.strategy): Kafka's eager
 * assignors of the classic protocol, each handing out what the Java client's does.
 *
 *   range        range-assignor.ts (rack-aware, KIP-881)
 *   roundrobin   round-robin-assignor.ts
 *
 * Kafka's sticky and cooperative-sticky assignors are not here: a consumer that lists one
 * of them gets INVALID_CONFIG.
 */
import type { PartitionAssignor } from './partition-assignor.js'
import { rangeAssignor } from './range-assignor.js'
import { roundRobinAssignor } from './round-robin-assignor.js'

export { compareMembers, type GroupAssignment, type MemberSubscription, type PartitionAssignor, type PartitionRacks } from './partition-assignor.js'
export { rangeAssignor } from './range-assignor.js'
export { roundRobinAssignor } from './round-robin-assignor.js'

export const ASSIGNORS: Readonly<Record<string, PartitionAssignor>> = { range: rangeAssignor, roundrobin: roundRobinAssignor }

/** An assignor by Kafka's short name or Java class name (`org.apache.kafka.clients.consumer.RangeAssignor`). */
export function assignorNamed(name: string): PartitionAssignor | undefined {
  const short = name
    .trim()
    .replace(/^org\.apache\.kafka\.clients\.consumer\./, '')
    .replace(/Assignor$/, '')
    .toLowerCase()
  return ASSIGNORS[short === 'roundrobin' ? 'roundrobin' : short]
}
