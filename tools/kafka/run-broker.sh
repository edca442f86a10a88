#!/usr/bin/env bash
# Start one Apache Kafka node (KRaft, combined broker+controller; a single-node cluster by
# default) from the jars in tools/kafka/.jars, listening on 127.0.0.1 only. For tests, fixtures
# and benchmarks.
#
#   tools/kafka/run-broker.sh --data-dir DIR [--port N] [--controller-port N]
#                             [--node-id N] [--voters ID@HOST:PORT,...]
#                             [--set key=value]... [--foreground] [--wait-secs N]
#   tools/kafka/stop-broker.sh DIR          # SIGTERM, wait for a clean shutdown
#
# Layout under DIR (created if missing; formatted on first start, reused after):
#   DIR/config/server.properties, DIR/config/log4j2.properties   written on every start
#   DIR/kafka-logs/           log.dirs: partition directories such as fixture-0/
#   DIR/metadata/             metadata.log.dir (__cluster_metadata-0)
#   DIR/broker.log            the JVM's stdout+stderr (Kafka's log4j output)
#   DIR/broker.pid            pid of the JVM while it runs
#
# Default (background) mode returns once the broker logged "Kafka Server started" and prints,
# one per line:  pid=… bootstrap=127.0.0.1:PORT controller=127.0.0.1:CPORT log_dirs=… log=…
# --foreground execs the JVM instead (stop it with SIGTERM / Ctrl-C; a caller's trap works).
# Ports default to free ephemeral ports. --node-id (default 1) and --voters
# (controller.quorum.voters, default: this node alone, NODE@127.0.0.1:CPORT) make the node one
# member of a larger quorum: tools/kafka/run-cluster.sh starts three that way. --set adds or
# overrides a server property (e.g. --set log.segment.bytes=1048576). Env: KAFKA_HEAP_OPTS
# (default -Xms256m -Xmx1g), KAFKA_JARS_DIR (default: whatever fetch-jars.sh prints),
# KAFKA_CLUSTER_ID (default: fixed).
#
# Security (all off by default: the broker above is PLAINTEXT only):
#   --secure-listener SSL|SASL_SSL|SASL_PLAINTEXT   a second client listener of that protocol,
#                             named after it, on --secure-port (default: a free port); its
#                             address is printed as secure=127.0.0.1:PORT. The PLAINTEXT listener
#                             stays (inter-broker, and for admin tools) and so does CONTROLLER.
#   --ssl-keystore FILE       PEM: the private key, then the certificate chain (ssl.keystore.type=PEM,
#                             ssl.keystore.location). The key may be PKCS#8 encrypted with
#                             PBES2/AES-256-CBC (node:crypto's `cipher: 'aes-256-cbc'` export, as
#                             ts/security/certificates.ts writes it): Kafka 4.4 on Java 17 reads it.
#   --ssl-key-password PW     ssl.key.password, for an encrypted key
#   --ssl-truststore FILE     PEM CA certificates (ssl.truststore.type=PEM): what client
#                             certificates are checked against
#   --ssl-client-auth required|requested|none   (default none)
#   --sasl-mechanisms LIST    sasl.enabled.mechanisms of the secure listener, e.g.
#                             PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER (default PLAIN). Each
#                             gets its listener.name.<l>.<mech>.sasl.jaas.config. OAUTHBEARER uses
#                             Kafka's unsecured JWS validator (alg "none" tokens with sub and exp).
#   --plain-user NAME:PASSWORD      a PLAIN user (user_NAME in PlainLoginModule); repeatable
#   --scram-user MECH:NAME:PASSWORD a SCRAM-SHA-256 or SCRAM-SHA-512 credential, stored when the
#                             data dir is formatted (kafka-storage format --add-scram), so only on
#                             the first start of DIR; add later ones with kafka-configs.sh
#                             --alter --entity-type users over the PLAINTEXT listener. Repeatable.
#   --super-users 'User:a;User:b'   turns on org.apache.kafka.metadata.authorizer.StandardAuthorizer
#                             with these super users plus User:ANONYMOUS: the principal of the
#                             PLAINTEXT and CONTROLLER listeners (the broker talks to its
#                             controller as ANONYMOUS) and of an SSL listener without client
#                             authentication. ACL tests go through the SASL or client-certificate
#                             listener; admin tools on the PLAINTEXT one may do anything.
# Names and passwords may not contain '"', '\', ',', ']' or ';' (they go into JAAS and
# --add-scram strings unquoted further).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

data="" port="" cport="" node_id=1 voters="" fg=0 wait_secs=90
secure="" sport="" keystore="" key_password="" truststore="" client_auth=none mechanisms=PLAIN super_users=""
sets=() plain_users=() scram_users=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data-dir) data="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --controller-port) cport="$2"; shift 2 ;;
    --node-id) node_id="$2"; shift 2 ;;
    --voters) voters="$2"; shift 2 ;;
    --set) sets+=("$2"); shift 2 ;;
    --foreground) fg=1; shift ;;
    --secure-listener) secure="$2"; shift 2 ;;
    --secure-port) sport="$2"; shift 2 ;;
    --ssl-keystore) keystore="$2"; shift 2 ;;
    --ssl-key-password) key_password="$2"; shift 2 ;;
    --ssl-truststore) truststore="$2"; shift 2 ;;
    --ssl-client-auth) client_auth="$2"; shift 2 ;;
    --sasl-mechanisms) mechanisms="$2"; shift 2 ;;
    --plain-user) plain_users+=("$2"); shift 2 ;;
    --scram-user) scram_users+=("$2"); shift 2 ;;
    --super-users) super_users="$2"; shift 2 ;;
    --wait-secs) wait_secs="$2"; shift 2 ;;
    -h|--help) sed -n '2,59p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run-broker.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$data" ]] || { echo "run-broker.sh: --data-dir is required" >&2; exit 2; }
mkdir -p "$data"
data="$(cd "$data" && pwd)"

if [[ -f "$data/broker.pid" ]] && kill -0 "$(cat "$data/broker.pid")" 2>/dev/null; then
  echo "run-broker.sh: a broker already runs for $data (pid $(cat "$data/broker.pid"))" >&2
  exit 1
fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
[[ -n "$port" ]] || port="$(free_port)"
[[ -n "$cport" ]] || cport="$(free_port)"
[[ "$port" != "$cport" ]] || { echo "run-broker.sh: port and controller port must differ" >&2; exit 2; }
case "$secure" in
  "") ;;
  SSL|SASL_SSL|SASL_PLAINTEXT) [[ -n "$sport" ]] || sport="$(free_port)" ;;
  *) echo "run-broker.sh: --secure-listener wants SSL, SASL_SSL or SASL_PLAINTEXT, got $secure" >&2; exit 2 ;;
esac
if [[ "$secure" == SSL || "$secure" == SASL_SSL ]]; then
  [[ -f "$keystore" ]] || { echo "run-broker.sh: $secure wants --ssl-keystore FILE (PEM key + chain)" >&2; exit 2; }
fi
case "$client_auth" in required|requested|none) ;; *) echo "run-broker.sh: --ssl-client-auth wants required, requested or none" >&2; exit 2 ;; esac
bad_chars='["\\,;]|\]'
for s in "${plain_users[@]+"${plain_users[@]}"}" "${scram_users[@]+"${scram_users[@]}"}" "$key_password"; do
  [[ ! "$s" =~ $bad_chars ]] || { echo "run-broker.sh: a name or password holds one of \" \\ , ] ;" >&2; exit 2; }
done
[[ "$node_id" =~ ^[0-9]+$ ]] || { echo "run-broker.sh: --node-id wants a number, got $node_id" >&2; exit 2; }
[[ -n "$voters" ]] || voters="$node_id@127.0.0.1:$cport"
[[ ",$voters," == *",$node_id@127.0.0.1:$cport,"* ]] \
  || { echo "run-broker.sh: --voters $voters does not list this node ($node_id@127.0.0.1:$cport)" >&2; exit 2; }

jars="${KAFKA_JARS_DIR:-$("$here/fetch-jars.sh")}"
cp="$jars/*"
# A fixed cluster id (22 chars, base64 of a UUID) keeps meta.properties stable between runs.
cluster_id="${KAFKA_CLUSTER_ID:-ZmVycm9sb2ctZml4dHVyZQ}"

mkdir -p "$data/config" "$data/kafka-logs" "$data/metadata"
props="$data/config/server.properties"
cat >"$props" <<PROPS
# written by tools/kafka/run-broker.sh
process.roles=broker,controller
node.id=$node_id
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport${secure:+,$secure://127.0.0.1:$sport}
advertised.listeners=PLAINTEXT://127.0.0.1:$port${secure:+,$secure://127.0.0.1:$sport}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT${secure:+,$secure:$secure}
log.dirs=$data/kafka-logs
metadata.log.dir=$data/metadata
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
PROPS
if [[ "$secure" == SSL || "$secure" == SASL_SSL ]]; then
  {
    echo "ssl.keystore.type=PEM"
    echo "ssl.keystore.location=$(cd "$(dirname "$keystore")" && pwd)/$(basename "$keystore")"
    [[ -z "$key_password" ]] || echo "ssl.key.password=$key_password"
    if [[ -n "$truststore" ]]; then
      echo "ssl.truststore.type=PEM"
      echo "ssl.truststore.location=$(cd "$(dirname "$truststore")" && pwd)/$(basename "$truststore")"
    fi
    echo "ssl.client.auth=$client_auth"
  } >>"$props"
fi
if [[ "$secure" == SASL_* ]]; then
  l="$(tr '[:upper:]' '[:lower:]' <<<"$secure")"
  echo "listener.name.$l.sasl.enabled.mechanisms=$mechanisms" >>"$props"
  IFS=, read -r -a mechs <<<"$mechanisms"
  for m in "${mechs[@]}"; do
    case "$m" in
      PLAIN)
        users=""
        for u in "${plain_users[@]+"${plain_users[@]}"}"; do users+=" user_${u%%:*}=\"${u#*:}\""; done
        echo "listener.name.$l.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required$users;" ;;
      SCRAM-SHA-256|SCRAM-SHA-512)
        echo "listener.name.$l.$(tr '[:upper:]' '[:lower:]' <<<"$m").sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;" ;;
      OAUTHBEARER)
        echo "listener.name.$l.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"broker\";" ;;
      *) echo "run-broker.sh: unknown SASL mechanism $m" >&2; exit 2 ;;
    esac
  done >>"$props"
fi
if [[ -n "$super_users" ]]; then
  echo "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer" >>"$props"
  echo "super.users=User:ANONYMOUS;$super_users" >>"$props"
fi
for kv in "${sets[@]+"${sets[@]}"}"; do
  [[ "$kv" == *=* ]] || { echo "run-broker.sh: --set wants key=value, got $kv" >&2; exit 2; }
  # drop an earlier line for the same key, then append
  awk -v k="${kv%%=*}" 'index($0, k "=") != 1' "$props" >"$props.tmp"
  mv "$props.tmp" "$props"
  echo "$kv" >>"$props"
done

cat >"$data/config/log4j2.properties" <<'L4J'
status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.controller.name = org.apache.kafka.controller
logger.controller.level = INFO
logger.raft.name = org.apache.kafka.raft
logger.raft.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
L4J

jvm=(java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g} -XX:+UseG1GC -Djava.awt.headless=true
     -Dlog4j2.configurationFile="$data/config/log4j2.properties" -Dfile.encoding=UTF-8 -cp "$cp")

if [[ ! -f "$data/kafka-logs/meta.properties" ]]; then
  scram_args=()
  for u in "${scram_users[@]+"${scram_users[@]}"}"; do
    IFS=: read -r mech name pw <<<"$u"
    [[ "$mech" == SCRAM-SHA-256 || "$mech" == SCRAM-SHA-512 ]] || { echo "run-broker.sh: --scram-user wants SCRAM-SHA-256|512:NAME:PASSWORD" >&2; exit 2; }
    scram_args+=(--add-scram "$mech=[name=$name,password=$pw]")
  done
  "${jvm[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$props" --ignore-formatted "${scram_args[@]+"${scram_args[@]}"}" \
    >"$data/format.log" 2>&1 || { cat "$data/format.log" >&2; exit 1; }
fi

if [[ $fg == 1 ]]; then
  echo "$$" >"$data/broker.pid"
  echo "pid=$$"
  echo "bootstrap=127.0.0.1:$port"
  exec "${jvm[@]}" kafka.Kafka "$props"
fi

: >"$data/broker.log"
# setsid: the broker does not get the caller's Ctrl-C / job-control signals.
setsid "${jvm[@]}" kafka.Kafka "$props" >>"$data/broker.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$data/broker.pid"

deadline=$((SECONDS + wait_secs))
until grep -q "Kafka Server started" "$data/broker.log"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "run-broker.sh: broker exited during start-up; tail of $data/broker.log:" >&2
    tail -n 40 "$data/broker.log" >&2
    rm -f "$data/broker.pid"
    exit 1
  fi
  if (( SECONDS >= deadline )); then
    echo "run-broker.sh: broker not started after ${wait_secs}s; stopping it" >&2
    "$here/stop-broker.sh" "$data" >&2 || true
    exit 1
  fi
  sleep 0.2
done
echo "pid=$pid"
echo "bootstrap=127.0.0.1:$port"
echo "controller=127.0.0.1:$cport"
[[ -z "$secure" ]] || echo "secure=127.0.0.1:$sport"
echo "log_dirs=$data/kafka-logs"
echo "log=$data/broker.log"
