// A process that starts an in-process 3-broker cluster from the built package (dist/), creates a
// replicated topic, produces to it, moves the partition's leader, kills a broker (its lease still
// running when the cluster stops), stops the cluster, and then has nothing left to do: it must
// exit by itself (no process.exit). Prints the cluster's root dir so the test can check that stop
// removed it.
import kafkajs from 'kafkajs'
import { startCluster } from '../../dist/ts/index.js'

const { Kafka, logLevel } = kafkajs
const cluster = await startCluster({ brokers: 3 })
process.stdout.write(`root=${cluster.root}\n`)
const kafka = new Kafka({ clientId: 'cluster-child', brokers: cluster.bootstrapServers.split(','), logLevel: logLevel.NOTHING })
const admin = kafka.admin()
await admin.connect()
await admin.createTopics({ topics: [{ topic: 'child', numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true })
await admin.disconnect()
const producer = kafka.producer()
await producer.connect()
await producer.send({ topic: 'child', acks: -1, messages: [{ key: 'k', value: 'hello from the child' }] })
await producer.disconnect()
process.stdout.write('produced\n')
const leader = cluster.leaderOf('child', 0)
await cluster.moveLeader('child', 0, leader === 1 ? 2 : 1)
await cluster.killBroker(3)
await cluster.stop()
// What still keeps the process alive: only stdout (and an fs request finishing) may be left.
process.stdout.write(`stopped resources=${JSON.stringify(process.getActiveResourcesInfo())}\n`)
