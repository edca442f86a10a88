#!/usr/bin/env bash
# Capture real request/response frames between the Java client and a real Apache Kafka broker,
# for __test__/fixtures/protocol/. Not run by CI: run by hand, look at the result, commit.
#
#   tools/kafka/capture-protocol.sh OUT_DIR
#
# Steps: fetch jars -> compile ProtocolCapture.java -> pick two free ports -> start a fresh
# single-node broker (run-broker.sh) whose advertised listener is the proxy's port, so that every
# connection of the client goes through the proxy -> start capture-proxy.mjs (ApiVersions capped
# at v3 and Metadata at v12, the versions ferrolog serves) -> ProtocolCapture -> one raw
# ApiVersions v127 request sent straight to the broker (its UNSUPPORTED_VERSION answer) -> stop.
# OUT_DIR gets every frame (see capture-proxy.mjs); __test__/fixtures/protocol/ keeps a few.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: capture-protocol.sh OUT_DIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

jars="$("$here/fetch-jars.sh")"
mkdir -p "$here/.classes"
javac -cp "$jars/*" -d "$here/.classes" "$here/ProtocolCapture.java"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
port="$(free_port)"
proxy_port="$(free_port)"

work="$(mktemp -d /tmp/ferrolog-capture.XXXXXX)"
proxy_pid=""
cleanup() {
  [[ -n "$proxy_pid" ]] && kill "$proxy_pid" 2>/dev/null || true
  "$here/stop-broker.sh" "$work/broker" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$here/run-broker.sh" --data-dir "$work/broker" --port "$port" \
  --set "advertised.listeners=PLAINTEXT://127.0.0.1:$proxy_port"

node "$here/capture-proxy.mjs" --listen "$proxy_port" --target "127.0.0.1:$port" --out "$out/frames" \
  --api-versions-max 3 --cap 3:12 >"$work/proxy.out" &
proxy_pid=$!
until grep -q listening= "$work/proxy.out" 2>/dev/null; do sleep 0.1; done

java -Dlog4j2.configurationFile="$here/log4j2-tools.properties" -cp "$here/.classes:$jars/*" \
  ProtocolCapture "127.0.0.1:$proxy_port"

# The broker's own answer to an ApiVersions request of a version it does not know.
node - "$port" "$out/api-versions-v127-unsupported-response.bin" <<'JS'
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
echo "frames in $out/frames ($(wc -l <"$out/frames/index.jsonl") frames)"
