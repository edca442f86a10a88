import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { assignReplicasToBrokers, rackAlternatedBrokerList } from '../../ts/cluster/replica-placement.js'

const plain = (n: number) => Array.from({ length: n }, (_, id) => ({ id, rack: null }))

describe('assignReplicasToBrokers (Kafka AdminUtils)', () => {
  it('without racks follows Kafka documented example: round robin, follower shift grows every n partitions', () => {
    const a = assignReplicasToBrokers(plain(5), 10, 3, 0, 0)
    expect(a.slice(0, 6)).toEqual([
      [0, 1, 2],
      [1, 2, 3],
      [2, 3, 4],
      [3, 4, 0],
      [4, 0, 1],
      [0, 2, 3],
    ])
    expect(a[6]).toEqual([1, 3, 4])
  })

  it('rack-alternated list takes one broker per sorted rack in turn', () => {
    const racks = new Map([
      [0, 'rack1'],
      [1, 'rack3'],
      [2, 'rack3'],
      [3, 'rack2'],
      [4, 'rack2'],
      [5, 'rack1'],
    ])
    expect(rackAlternatedBrokerList(racks)).toEqual([0, 3, 1, 5, 4, 2])
  })

  it('puts every partition replicas on distinct racks when there are enough racks, for any random start', () => {
    const brokers = [0, 1, 2, 3, 4, 5].map((id) => ({ id, rack: `r${id % 3}` }))
    for (let seed = 0; seed < 6; seed++) {
      const a = assignReplicasToBrokers(brokers, 12, 3, -1, -1, () => seed)
      for (const replicas of a) {
        expect(new Set(replicas).size).toBe(3)
        expect(new Set(replicas.map((b) => b % 3)).size).toBe(3)
      }
    }
    // two racks, three replicas: both racks hold one
    const two = [0, 1, 2, 3].map((id) => ({ id, rack: `r${id % 2}` }))
    for (const replicas of assignReplicasToBrokers(two, 8, 3, 1, 0)) expect(new Set(replicas.map((b) => b % 2)).size).toBe(2)
  })

  it('refuses what Kafka refuses, with its codes', () => {
    expect(() => assignReplicasToBrokers(plain(2), 1, 3)).toThrow(expect.objectContaining({ errorCode: ErrorCode.INVALID_REPLICATION_FACTOR }))
    expect(() => assignReplicasToBrokers(plain(2), 0, 1)).toThrow(expect.objectContaining({ errorCode: ErrorCode.INVALID_PARTITIONS }))
    expect(() =>
      assignReplicasToBrokers(
        [
          { id: 0, rack: 'a' },
          { id: 1, rack: null },
        ],
        1,
        2,
      ),
    ).toThrow(expect.objectContaining({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT }))
  })
})
