// A cluster member in its own process, for tests that need a broker to die for real (SIGKILL,
// SIGSTOP): it starts ts/cluster's ClusterMetadata from dist/ and prints one line per event.
// Usage: node cluster-member.mjs <etcd url> <cluster id> <node.id> <session timeout ms>
import { ClusterMetadata } from '../../dist/ts/cluster/index.js'

const [cluster, clusterId, id, ttl] = process.argv.slice(2)
const cm = await ClusterMetadata.start(
  {
    cluster,
    clusterId,
    brokerId: Number(id),
    host: '127.0.0.1',
    port: 9000 + Number(id),
    sessionTimeoutMs: Number(ttl),
  },
  (cm) => {
    cm.registration.on('fenced', () => console.log('fenced'))
    cm.registration.on('registered', (epoch) => console.log(`registered ${epoch}`))
    cm.controller.on('activated', () => console.log('controller'))
  },
)
process.on('SIGTERM', () => cm.close().then(() => process.exit(0)))
