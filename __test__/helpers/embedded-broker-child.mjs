// A process that embeds a broker from the built package (dist/), does one kafkajs round trip,
// stops it, and then has nothing left to do: it must exit by itself, with no process.exit.
// Prints the broker's data dir (a temporary one) so the test can check that stop removed it.
import kafkajs from 'kafkajs'
import { startBroker } from '../../dist/ts/index.js'

const { Kafka, logLevel } = kafkajs
const broker = await startBroker({ port: 0 })
process.stdout.write(`dataDir=${broker.config.dataDir}\n`)
const kafka = new Kafka({ clientId: 'embedded-child', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING })
const producer = kafka.producer()
await producer.connect()
await producer.send({ topic: 'child', messages: [{ key: 'k', value: 'hello from the child' }] })
await producer.disconnect()
const consumer = kafka.consumer({ groupId: 'child-group' })
await consumer.connect()
await consumer.subscribe({ topic: 'child', fromBeginning: true })
const value = await new Promise((resolve) => {
  consumer.run({ eachMessage: async ({ message }) => resolve(message.value.toString()) })
})
await consumer.disconnect()
process.stdout.write(`consumed=${value}\n`)
await broker.stop()
process.stdout.write('stopped\n')
