/**
 * `ferrolog broker`: runs a broker until SIGINT or SIGTERM, then stops it cleanly (stop
 * accepting, close the logs with checkpoints and the clean-shutdown marker, release the lock).
 * Options: BROKER_USAGE below (`ferrolog broker --help`).
 */
import { Broker } from '../server/broker.js'
import { brokerConfigFrom, readPropertiesFile } from '../server/config.js'
import type { BackendName } from '../storage/backends.js'

export const BROKER_USAGE = `usage: ferrolog broker [options]

  --data-dir DIR                 where the logs live (default ./data)
  --listen HOST:PORT             default 127.0.0.1:9092; or listeners, NAME://HOST:PORT,...
                                 (e.g. PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093)
  --advertised-listener H:P      what Metadata tells clients (default: the listen address);
                                 or advertised.listeners, NAME://HOST:PORT,...
  --node-id N                    default 0
  --rack R                       broker.rack: this broker's rack, for replica placement and KIP-392
  --cluster etcd://H:P[,H:P]     cluster.metadata: join the cluster whose metadata is in this etcd
                                 (each broker its own --node-id, --listen and --data-dir; default:
                                 a standalone broker, needing nothing else)
  --config FILE                  Kafka-style key=value settings (log.segment.bytes, ...)
  --backend native|js            the storage engine (default native when the native binding
                                 loads, else js)
  --metrics-listen HOST:PORT     Prometheus metrics on GET /metrics there (default off)
  --transfer zero-copy|copy      how Fetch records reach the socket: sendfile from the segment
                                 files (default on Linux with the native binding) or read
                                 and written by Node
`

export async function brokerCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(BROKER_USAGE)
    return 0
  }
  const props: Record<string, string> = {}
  let backend: BackendName | undefined
  const options = new Map<string, (value: string) => void>([
    ['--config', (v) => Object.assign(props, readPropertiesFile(v))],
    ['--data-dir', (v) => (props['log.dirs'] = v)],
    ['--listen', (v) => (props['listeners'] = v)],
    ['--advertised-listener', (v) => (props['advertised.listeners'] = v)],
    ['--node-id', (v) => (props['node.id'] = v)],
    ['--rack', (v) => (props['broker.rack'] = v)],
    ['--cluster', (v) => (props['cluster.metadata'] = v)],
    ['--metrics-listen', (v) => (props['metrics.listen'] = v)],
    ['--transfer', (v) => (props['transfer.mode'] = v)],
    [
      '--backend',
      (v) => {
        if (v !== 'native' && v !== 'js') throw new Error(`--backend must be native or js, not "${v}"`)
        backend = v
      },
    ],
  ])
  // --config first, so that the other options override the file.
  const pairs: Array<[string, string]> = []
  for (let i = 0; i < args.length; i++) {
    const [flag = '', inline] = args[i]!.split(/=(.*)/s, 2)
    if (!options.has(flag)) throw new Error(`unknown option ${args[i]}`)
    const value = inline ?? args[++i]
    if (value === undefined) throw new Error(`${flag} needs a value`)
    pairs.push([flag, value])
  }
  pairs.sort(([a], [b]) => Number(b === '--config') - Number(a === '--config'))
  for (const [flag, value] of pairs) options.get(flag)!(value)

  // Listen for the signals before starting, so that one arriving during start-up still stops
  // the broker cleanly once it is up.
  const stopSignal = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'))
    process.once('SIGTERM', () => resolve('SIGTERM'))
  })
  const broker = await Broker.start(brokerConfigFrom(props), { backend })
  const listening = broker.listeners.length === 1 ? `${broker.config.host}:${broker.port}` : broker.listeners.map((l) => `${l.listenerName}://${l.host}:${l.port}`).join(',')
  process.stdout.write(`ferrolog broker listening on ${listening}, data in ${broker.config.dataDir}\n`)
  if (broker.config.metricsListen) process.stdout.write(`metrics on http://${broker.config.metricsListen.host}:${broker.metricsPort}/metrics\n`)
  broker.logger.info('signal received', { signal: await stopSignal })
  await broker.stop()
  return 0
}
