#!/usr/bin/env bash
# Capture real request/response frames between Kafka clients (the Java client 4.4, librdkafka's
# kcat) and a real Apache Kafka 4.4 broker, and keep a chosen few as the fixtures of
# __test__/fixtures/protocol/control-path/ (see the README there). Not run by CI: run it by hand,
# look at the diff, commit.
#
#   tools/kafka/capture-protocol.sh [FRAMES_DIR]    # FRAMES_DIR (default: a temp dir) keeps all frames
#
# Steps: fetch jars -> compile ProtocolCapture.java -> pick two free ports -> start a fresh
# single-node broker (run-broker.sh) whose advertised listener is the proxy's port, so that every
# connection of the clients goes through the proxy -> start capture-proxy.mjs (ApiVersions capped
# at v3 and Metadata at v12, the versions ferrolog serves) -> ProtocolCapture (Java client) ->
# kcat -L and an idempotent kcat -P (librdkafka) -> one raw ApiVersions v127 request sent straight
# to the broker (its UNSUPPORTED_VERSION answer) -> stop -> copy the chosen frames.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fixtures="$repo/__test__/fixtures/protocol/control-path"

jars="$("$here/fetch-jars.sh")"
mkdir -p "$here/.classes"
javac -cp "$jars/*" -d "$here/.classes" "$here/ProtocolCapture.java"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
port="$(free_port)"
proxy_port="$(free_port)"

work="$(mktemp -d /tmp/ferrolog-capture.XXXXXX)"
frames="${1:-$work/frames}"
rm -rf "$frames"
mkdir -p "$frames"
proxy_pid=""
cleanup() {
  [[ -n "$proxy_pid" ]] && kill "$proxy_pid" 2>/dev/null || true
  "$here/stop-broker.sh" "$work/broker" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$here/run-broker.sh" --data-dir "$work/broker" --port "$port" \
  --set "advertised.listeners=PLAINTEXT://127.0.0.1:$proxy_port"

node "$here/capture-proxy.mjs" --listen "$proxy_port" --target "127.0.0.1:$port" --out "$frames" \
  --api-versions-max 3 --cap 3:12 >"$work/proxy.out" &
proxy_pid=$!
until grep -q listening= "$work/proxy.out" 2>/dev/null; do sleep 0.1; done

java -Dlog4j2.configurationFile="$here/log4j2-tools.properties" -cp "$here/.classes:$jars/*" \
  ProtocolCapture "127.0.0.1:$proxy_port"

# librdkafka (Debian's kcat) uses older versions: Metadata v4 (classic), InitProducerId v4.
kcat -b "127.0.0.1:$proxy_port" -L -t kept >/dev/null
echo "from kcat" | kcat -b "127.0.0.1:$proxy_port" -P -t kept -X enable.idempotence=true

# The broker's own answer to an ApiVersions request of a version it does not know.
node - "$port" "$frames/api-versions-v127-response.bin" <<'JS'
const net = require('node:net')
const fs = require('node:fs')
const [port, file] = process.argv.slice(2)
// size 17: apiKey 18, apiVersion 127, correlationId 7, clientId "probe", tagged fields 00, body 00
const req = Buffer.from('00000011' + '0012' + '007f' + '00000007' + '0005' + Buffer.from('probe').toString('hex') + '00' + '00', 'hex')
const s = net.connect(Number(port), '127.0.0.1', () => s.write(req))
let got = Buffer.alloc(0)
s.on('data', (d) => {
  got = Buffer.concat([got, d])
  if (got.length >= 4 && got.length >= 4 + got.readInt32BE(0)) {
    fs.writeFileSync(file, got.subarray(4, 4 + got.readInt32BE(0)))
    s.end()
  }
})
JS

kill "$proxy_pid"
wait "$proxy_pid" 2>/dev/null || true
proxy_pid=""
"$here/stop-broker.sh" "$work/broker"

# Keep a few exchanges: [fixture name, apiKey, version, clientId, which match ("first"/"last"/n)].
# A request is saved as NAME-request.<client>.bin, its answer as NAME-response.kafka.bin.
rm -rf "$fixtures"/*.bin
mkdir -p "$fixtures"
node - "$frames" "$fixtures" <<'JS'
const fs = require('node:fs')
const path = require('node:path')
const [frames, fixtures] = process.argv.slice(2)
const index = fs.readFileSync(path.join(frames, 'index.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
const pick = [
  ['api-versions-v5', 18, 5, 'capture-admin', 'first', { requestOnly: true }],
  ['api-versions-v3', 18, 3, 'capture-admin', 'first'],
  ['api-versions-v3', 18, 3, 'rdkafka', 'first', { requestOnly: true }],
  ['metadata-v12-no-topics', 3, 12, 'capture-admin', 'first'],
  ['metadata-v12', 3, 12, 'capture-producer', 'first'],
  ['metadata-v4', 3, 4, 'rdkafka', 'first'],
  ['create-topics-v7', 19, 7, 'capture-admin', 'first'],
  ['create-topics-v7-validate-only', 19, 7, 'capture-admin', 2],
  ['describe-configs-v4', 32, 4, 'capture-admin', 'first'],
  ['create-partitions-v3', 37, 3, 'capture-admin', 'first'],
  ['init-producer-id-v5', 22, 5, 'capture-producer', 'last'],
  ['init-producer-id-v5-transactional', 22, 5, 'capture-txn', 'last'],
  ['init-producer-id-v4', 22, 4, 'rdkafka', 'first'],
  ['delete-records-v2', 21, 2, 'capture-admin', 'first'],
  ['offset-for-leader-epoch-v4', 23, 4, 'capture-consumer', 'first'],
  ['delete-topics-v6-by-name', 20, 6, 'capture-admin', 'first'],
  ['delete-topics-v6-by-id', 20, 6, 'capture-admin', 2],
]
const client = { 'capture-admin': 'java', 'capture-producer': 'java', 'capture-txn': 'java', 'capture-consumer': 'java', rdkafka: 'librdkafka' }
for (const [name, apiKey, version, clientId, which, opts = {}] of pick) {
  const requests = index.filter((e) => e.kind === 'request' && e.apiKey === apiKey && e.version === version && e.clientId === clientId)
  const request = which === 'first' ? requests[0] : which === 'last' ? requests[requests.length - 1] : requests[which - 1]
  if (!request) throw new Error(`no frame for ${name} (${clientId})`)
  fs.copyFileSync(path.join(frames, request.file), path.join(fixtures, `${name}-request.${client[clientId]}.bin`))
  if (opts.requestOnly) continue
  const response = index.find((e) => e.kind === 'response' && e.conn === request.conn && e.correlationId === request.correlationId)
  if (!response) throw new Error(`no response for ${name}`)
  fs.copyFileSync(path.join(frames, response.file), path.join(fixtures, `${name}-response.kafka.bin`))
}
fs.copyFileSync(path.join(frames, 'api-versions-v127-response.bin'), path.join(fixtures, 'api-versions-v127-response.kafka.bin'))
JS
echo "$(wc -l <"$frames/index.jsonl") frames in $frames; fixtures in $fixtures:"
ls -l "$fixtures"
