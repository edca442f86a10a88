#!/usr/bin/env node
// A/B in one process: the ResponseWriter of two builds writing 60-byte answers (a Produce
// answer's size), one per turn of the event loop, over node:tls (MODE=plain: plain TCP) on
// loopback; CPU-us per answer of the whole process (both ends), alternated rounds, medians.
//   node bench/response-writer-ab.mjs BEFORE/dist/ts AFTER/dist/ts
import tls from 'node:tls'
import net from 'node:net'
const [beforeDist, afterDist] = process.argv.slice(2)
const { createCertificateAuthority } = await import(`${afterDist}/security/certificates.js`)
const ca = createCertificateAuthority()
const cert = ca.issue({ subject: { CN: 'b' }, usage: 'server' })
const builds = { before: await import(`${beforeDist}/network/response-writer.js`), after: await import(`${afterDist}/network/response-writer.js`) }
const mode = process.env.MODE ?? 'tls'
async function pair() {
  let srv
  const server = mode === 'tls' ? tls.createServer({ key: cert.keyPem, cert: cert.chainPem }) : net.createServer()
  const accepted = new Promise((r) =>
    server.once(mode === 'tls' ? 'secureConnection' : 'connection', (s) => {
      srv = s
      r()
    }),
  )
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const port = server.address().port
  const client = mode === 'tls' ? tls.connect({ port, host: '127.0.0.1', ca: ca.certificatePem, servername: 'localhost' }) : net.connect(port, '127.0.0.1')
  await new Promise((r) => client.once(mode === 'tls' ? 'secureConnect' : 'connect', r))
  await accepted
  srv.setNoDelay(true)
  return {
    srv,
    client,
    close: () => {
      client.destroy()
      srv.destroy()
      server.close()
    },
  }
}
const N = 5000,
  SIZE = 60
const body = Buffer.alloc(SIZE, 1)
async function runOnce(name) {
  const p = await pair()
  const w = new builds[name].ResponseWriter(p.srv, null, (r) => {
    throw new Error(r)
  })
  let got = 0
  const want = N * (SIZE + 4)
  const done = new Promise((r) =>
    p.client.on('data', (d) => {
      got += d.length
      if (got >= want) r()
    }),
  )
  const t0 = process.cpuUsage()
  // one response per turn of the event loop, as a produce answer comes after its request
  for (let i = 0; i < N; i++) {
    w.write(body)
    await new Promise((r) => setImmediate(r))
  }
  await done
  const u = process.cpuUsage(t0)
  p.close()
  return (u.user + u.system) / N
}
const res = { before: [], after: [] }
for (let round = 0; round < 7; round++)
  for (const name of round % 2 ? ['after', 'before'] : ['before', 'after']) {
    const us = await runOnce(name)
    if (round > 0) res[name].push(us)
  }
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
for (const k of ['before', 'after']) console.log(mode, k, 'µs CPU per response (both ends):', med(res[k]).toFixed(2), res[k].map((x) => x.toFixed(1)).join(' '))
