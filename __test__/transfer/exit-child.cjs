// A process that holds a TransferEngine and ends in one of several ways; the test checks it
// exits with status 0 and no signal (no hang from the engine's threadsafe function, no crash
// from a completion delivered into a torn-down environment).
// Usage: node exit-child.cjs <idle|pending-natural|pending-exit|pending-unref|worker> <file>
//   pending-unref: the sockets are unref'd, so the environment is torn down while the job still
//                  waits: the engine's cleanup hook must end it without calling into JS
//   worker:        pending-unref inside a worker thread that the main thread terminates
const net = require('node:net')
const { Worker, isMainThread } = require('node:worker_threads')
const { TransferEngine, FileRecords } = require('../../ts/native/index.js')

const [mode, file] = isMainThread ? process.argv.slice(2) : ['pending-unref', process.argv[3]]
if (mode === 'worker') {
  const worker = new Worker(__filename, { argv: ['pending-unref', file] })
  worker.on('error', (e) => {
    process.stderr.write(`worker failed: ${e.stack}\n`)
    process.exitCode = 1
  })
  setTimeout(() => worker.terminate(), 300)
  return
}
const engine = new TransferEngine((jobId, bytesSent, error) => {
  process.stdout.write(`completion ${jobId} ${error}\n`)
})

if (mode === 'idle') {
  process.stdout.write('idle\n') // nothing else: the event loop is empty, the process must exit
} else {
  const server = net.createServer((sender) => {
    sender.on('error', () => {})
    const records = FileRecords.open(file, 0, 32 << 20)
    engine.send(sender._handle.fd, [Buffer.from('header'), records])
    if (mode === 'pending-unref') {
      for (const handle of [sender, client, server]) handle.unref()
      return
    }
    setTimeout(() => {
      if (mode === 'pending-exit') process.exit(0)
      // pending-natural: drop everything while the job still waits for the paused reader
      sender.destroy()
      client.destroy()
      server.close()
    }, 100)
  })
  let client
  server.listen(0, '127.0.0.1', () => {
    client = net.connect(server.address().port, '127.0.0.1')
    client.on('error', () => {})
    client.pause()
  })
}
