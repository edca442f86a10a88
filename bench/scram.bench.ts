/**
 * SCRAM's cost on the broker: one whole exchange of ScramSaslServer (client-first and
 * client-final, the client's proof included: three HMACs and two hashes on each side) next to
 * one Hi(password, salt, 4096), the PBKDF2 a client runs per connection. The broker never runs Hi
 * while authenticating (it holds StoredKey and ServerKey), so its share of a SCRAM connection is
 * the small one; the ratio is the point, not the absolute numbers.
 *
 *   node scripts/build.mjs ts && node dist/bench/scram.bench.js
 */
import { CredentialCache } from '../ts/security/scram/credential-cache.js'
import { authMessage, ScramFormatter } from '../ts/security/scram/scram-formatter.js'
import { SCRAM_SHA_256, SCRAM_SHA_512 } from '../ts/security/scram/scram-mechanism.js'
import { ScramSaslServer } from '../ts/security/scram/scram-sasl-server.js'

const EXCHANGES = Number(process.env.BENCH_EXCHANGES ?? 5000)
const HI_RUNS = 50

async function main(): Promise<void> {
  for (const mechanism of [SCRAM_SHA_256, SCRAM_SHA_512]) {
    const f = new ScramFormatter(mechanism)
    const cache = new CredentialCache()
    const credential = f.generateCredential('password', 4096)
    cache.update(mechanism.mechanismName, 'alice', credential)
    const salted = f.saltedPassword('password', credential.salt, 4096)
    let start = process.hrtime.bigint()
    for (let i = 0; i < EXCHANGES; i++) {
      const server = new ScramSaslServer(mechanism, cache)
      const bare = 'n=alice,r=client-nonce'
      const first = (await server.evaluateResponse(Buffer.from(`n,,${bare}`))).toString()
      const withoutProof = `c=biws,r=${first.slice(2, first.indexOf(','))}`
      const proof = f.clientProof(salted, authMessage(bare, first, withoutProof))
      await server.evaluateResponse(Buffer.from(`${withoutProof},p=${proof.toString('base64')}`))
      if (!server.complete) throw new Error('exchange failed')
    }
    const exchangeUs = Number(process.hrtime.bigint() - start) / EXCHANGES / 1000
    start = process.hrtime.bigint()
    for (let i = 0; i < HI_RUNS; i++) f.saltedPassword('password', credential.salt, 4096)
    const hiUs = Number(process.hrtime.bigint() - start) / HI_RUNS / 1000
    console.log(`${mechanism.mechanismName}: exchange ${exchangeUs.toFixed(1)} us, client Hi(4096) ${hiUs.toFixed(0)} us, Hi / exchange ${(hiUs / exchangeUs).toFixed(0)}x`)
  }
}

void main()
