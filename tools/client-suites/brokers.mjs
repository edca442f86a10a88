/**
 * The brokers each client's test suite expects, as ferrolog (in this process, the embedded
 * broker and cluster of dist/) or as Apache Kafka 4.4 (tools/kafka/run-broker.sh and
 * run-cluster.sh, JVMs in the background). Ports are the ones the suites' docker-compose files
 * publish, since the suites hard-code them; brokers advertise 127.0.0.1 (the suites connect to
 * `localhost`).
 *
 *   kafkajs 2.2.4 (docker-compose.2_4.yml): three brokers, ids 0..2, PLAINTEXT on 9092, 9095, 9098,
 *     num.partitions 2, default.replication.factor 2, an authorizer letting everyone in where no
 *     ACL says otherwise. Its SSL (9093, ...) and SASL_SSL (9094, ...) listeners are not set up:
 *     their keystores are JKS files of the suite, see README.md.
 *   @platformatic/kafka (docker-compose.yml): broker-single on 9001; broker-sasl, SASL_PLAINTEXT
 *     on 9002 (PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER, super user admin, no access without
 *     an ACL, re-authentication every 5 s) with its PLAINTEXT twin on 19002 where the suite
 *     creates its SCRAM users; broker-cluster-1..3 on 9011..9013. Not set up: the Kerberos
 *     broker (9003) and the schema registries (8004..8006).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const here = new URL('.', import.meta.url).pathname
const KAFKA = join(here, '../kafka')

const common = {
  kafkajs: {
    'num.partitions': '2',
    'default.replication.factor': '2',
    'auto.create.topics.enable': 'true',
    'delete.topic.enable': 'true',
    'group.initial.rebalance.delay.ms': '0',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'allow.everyone.if.no.acl.found': 'true',
    'super.users': 'User:ANONYMOUS',
  },
  platformatic: {
    // Kafka's default, as in Confluent's image (run-broker.sh turns it off).
    'auto.create.topics.enable': 'true',
    'default.replication.factor': '1',
    'min.insync.replicas': '1',
    'offsets.topic.replication.factor': '1',
    'transaction.partition.verification.enable': 'false',
    'transaction.state.log.min.isr': '1',
    'transaction.state.log.replication.factor': '1',
    'group.coordinator.rebalance.protocols': 'classic,consumer',
    'group.initial.rebalance.delay.ms': '0',
    'group.consumer.heartbeat.interval.ms': '200',
    'group.consumer.min.heartbeat.interval.ms': '100',
  },
}

/** broker-cluster-N's own settings (its KAFKA_CFG_* lines are not read by Confluent's image: left out). */
const platformaticCluster = {
  'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
  'super.users': 'User:ANONYMOUS',
}

const SASL_MECHANISMS = 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER'

/** Starts the brokers of `suite` on ferrolog; resolves to a function stopping them all. */
export async function startFerrolog(suite, repoRoot) {
  const { startBroker, startCluster } = await import(join(repoRoot, 'dist/ts/index.js'))
  const stops = []
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => console.error('stop:', err))
  }
  try {
    if (suite === 'kafkajs') {
      const cluster = await startCluster({ brokers: 3, firstBrokerId: 0, listeners: (id) => `PLAINTEXT://127.0.0.1:${9092 + 3 * id}`, config: common.kafkajs })
      stops.push(() => cluster.stop())
    } else {
      const single = await startBroker({ port: 9001, host: '127.0.0.1', config: { ...common.platformatic } })
      stops.push(() => single.stop())
      const sasl = await startBroker({
        config: {
          ...common.platformatic,
          listeners: 'SASL://127.0.0.1:9002,DOCKER://127.0.0.1:19002',
          'listener.security.protocol.map': 'SASL:SASL_PLAINTEXT,DOCKER:PLAINTEXT',
          'inter.broker.listener.name': 'DOCKER',
          'sasl.enabled.mechanisms': SASL_MECHANISMS,
          'listener.name.sasl.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin" user_admin="admin";',
          'listener.name.sasl.scram-sha-256.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin";',
          'listener.name.sasl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin";',
          'listener.name.sasl.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
          'connections.max.reauth.ms': '5000',
          'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
          'allow.everyone.if.no.acl.found': 'false',
          // ANONYMOUS: the PLAINTEXT twin, where the suite (like Confluent's images) writes users.
          'super.users': 'User:admin;User:ANONYMOUS',
          'sasl.oauthbearer.expected.issuer': 'kafka',
          'sasl.oauthbearer.expected.audience': 'users',
          'sasl.oauthbearer.expected.scope': 'test',
        },
      })
      stops.push(() => sasl.stop())
      const cluster = await startCluster({ brokers: 3, listeners: (id) => `PLAINTEXT://127.0.0.1:${9010 + id}`, config: { ...common.platformatic, ...platformaticCluster } })
      stops.push(() => cluster.stop())
    }
  } catch (err) {
    await stopAll()
    throw err
  }
  return stopAll
}

function sets(props) {
  return Object.entries(props).flatMap(([k, v]) => ['--set', `${k}=${v}`])
}

/** Starts the brokers of `suite` on Apache Kafka 4.4 under `dir`; resolves to a function stopping them. */
export async function startKafka(suite, dir) {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const env = { ...process.env, KAFKA_HEAP_OPTS: process.env.KAFKA_HEAP_OPTS ?? '-Xms128m -Xmx512m' }
  const run = (script, args) => execFileSync('bash', [join(KAFKA, script), ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] }).toString()
  const stops = []
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      try {
        stop()
      } catch (err) {
        console.error('stop:', err.message)
      }
    }
  }
  const cluster = (name, ports, props, firstId = 1) => {
    const d = join(dir, name)
    mkdirSync(d, { recursive: true })
    // run-cluster.sh keeps the ports of DIR/cluster.ports: written first, they are the suite's.
    writeFileSync(join(d, 'cluster.ports'), ports.map((p, i) => `${firstId + i} ${p} ${p + 20000}\n`).join(''))
    run('run-cluster.sh', ['--data-dir', d, '--nodes', String(ports.length), ...sets(props)])
    stops.push(() => execFileSync('bash', [join(KAFKA, 'stop-cluster.sh'), d], { stdio: 'ignore' }))
  }
  try {
    if (suite === 'kafkajs') {
      // run-cluster.sh's default.replication.factor is N; the suite's brokers use 2.
      cluster('kafkajs', [9092, 9095, 9098], common.kafkajs, 0)
    } else {
      const single = join(dir, 'single')
      run('run-broker.sh', ['--data-dir', single, '--port', '9001', ...sets(common.platformatic)])
      stops.push(() => execFileSync('bash', [join(KAFKA, 'stop-broker.sh'), single], { stdio: 'ignore' }))
      const sasl = join(dir, 'sasl')
      run('run-broker.sh', [
        '--data-dir',
        sasl,
        '--port',
        '19002',
        '--secure-listener',
        'SASL_PLAINTEXT',
        '--secure-port',
        '9002',
        '--sasl-mechanisms',
        SASL_MECHANISMS,
        '--plain-user',
        'admin:admin',
        '--super-users',
        'User:admin',
        ...sets({ ...common.platformatic, 'connections.max.reauth.ms': '5000', 'allow.everyone.if.no.acl.found': 'false' }),
      ])
      stops.push(() => execFileSync('bash', [join(KAFKA, 'stop-broker.sh'), sasl], { stdio: 'ignore' }))
      cluster('cluster', [9011, 9012, 9013], { ...common.platformatic, ...platformaticCluster })
    }
  } catch (err) {
    await stopAll()
    throw err
  }
  return stopAll
}
