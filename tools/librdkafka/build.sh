#!/usr/bin/env bash
# Builds a current librdkafka and kcat against it into a cache directory outside the clone, and
# prints the path of that kcat. Idempotent: when this script's build is already there it only
# prints the path, so a fresh machine builds it once (about 3 minutes on 2 cores).
#
#   tools/librdkafka/build.sh             -> prints ~/.cache/ferrolog/librdkafka-2.15.1/bin/kcat
#   KCAT="$(tools/librdkafka/build.sh)"
#
# Why: Debian 12's kcat links librdkafka 2.0.2, which fails SCRAM-SHA-512 against Apache Kafka 4.4
# itself; the interop tests need a current librdkafka. Where the sources come from (this machine
# reaches package registries only):
# - librdkafka: the npm package @confluentinc/kafka-javascript ships librdkafka's full C source in
#   deps/librdkafka (it builds it with node-gyp). An npm version is immutable and its tarball's
#   sha512 is pinned below, so the same bytes come every time; nothing of the package but that
#   directory is used, and no install script runs (npm pack only downloads).
# - kcat: Debian's source package kafkacat (the upstream tarball, 1.7.1, kcat's latest release),
#   through apt from the Debian archive the machine is already configured with, in a private apt
#   state directory (the machine's apt lists and sources are not touched); its sha256 is pinned.
# Build needs: a C compiler, make, pkg-config, python3, libssl-dev and zlib1g-dev (.ci/run
# installs them). SASL SCRAM, PLAIN and OAUTHBEARER are librdkafka's own code (no Cyrus SASL);
# GSSAPI and the libcurl OIDC client are left out, lz4 is the bundled copy.
# kcat finds this librdkafka through its rpath: nothing is installed system-wide, Debian's kcat
# and librdkafka1 stay as they are.
#
# Env: FERROLOG_CACHE_DIR (default ${XDG_CACHE_HOME:-~/.cache}/ferrolog), LIBRDKAFKA_BUILD_FORCE=1
# rebuilds.
set -euo pipefail

NPM_PACKAGE=@confluentinc/kafka-javascript@1.10.1
NPM_INTEGRITY=sha512-KVePUBn21EqCVP9mfxzEuM3SYJHHEF7X+iiC2e43QQgDSyEaksInmCGooT3w5q+cNAdkSCrK71j0ICfqoSqZLw==
LIBRDKAFKA_VERSION=2.15.1
KCAT_SOURCE_PACKAGE=kafkacat
KCAT_VERSION=1.7.1
KCAT_ORIG_SHA256=4b957b7ffc728a88e163bc4e581aa371e56c7e74c8b84b1fe0583d0302ef8d58

cache="${FERROLOG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferrolog}"
prefix="$cache/librdkafka-$LIBRDKAFKA_VERSION"
stamp="$prefix/.build-stamp"
# This script's own hash: a change to a version, a pin or a build flag rebuilds.
want="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"

if [[ "${LIBRDKAFKA_BUILD_FORCE:-0}" != 1 && -x "$prefix/bin/kcat" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "$prefix/bin/kcat"
  exit 0
fi

log() { echo "librdkafka/build.sh: $*" >&2; }
for tool in cc make pkg-config python3 npm apt-get; do
  command -v "$tool" >/dev/null || { log "$tool not found (apt-get install build-essential pkgconf python3 libssl-dev zlib1g-dev)"; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/ferrolog-librdkafka-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
jobs="$(nproc 2>/dev/null || echo 2)"

# --- librdkafka's source from the npm tarball, checked against the pinned integrity.
log "fetching $NPM_PACKAGE (librdkafka $LIBRDKAFKA_VERSION source)"
tarball="$(cd "$work" && npm pack --silent "$NPM_PACKAGE" </dev/null | tail -n1)"
got="sha512-$(openssl dgst -sha512 -binary "$work/$tarball" | base64 -w0)"
[[ "$got" == "$NPM_INTEGRITY" ]] || { log "$tarball: integrity $got, expected $NPM_INTEGRITY"; exit 1; }
tar -xzf "$work/$tarball" -C "$work" package/deps/librdkafka
src="$work/package/deps/librdkafka"
grep -q "RD_KAFKA_VERSION  *0x0$(printf '%x%02x%02x' ${LIBRDKAFKA_VERSION//./ })ff" "$src/src/rdkafka.h" \
  || { log "the tarball's librdkafka is not $LIBRDKAFKA_VERSION"; exit 1; }

# --- kcat's upstream tarball from Debian's source package, through a private apt state.
log "fetching Debian's $KCAT_SOURCE_PACKAGE $KCAT_VERSION source"
apt_dir="$work/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/sources.list.d"
# The machine's own Debian archive entries, as deb-src (deb822 or one-line form).
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f "$f" ]] && sed -E 's/^Types:[[:space:]]*deb$/Types: deb-src/' "$f" >"$apt_dir/sources.list.d/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [[ -f "$f" ]] && sed -nE 's/^deb[[:space:]]/deb-src /p' "$f" >"$apt_dir/sources.list.d/$(basename "$f")"
done
apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root" -q)
apt-get "${apt_opts[@]}" update </dev/null >&2
# The .orig tarball's URI (the Debian packaging around it is not needed).
orig_uri="$(apt-get "${apt_opts[@]}" source --print-uris "$KCAT_SOURCE_PACKAGE" </dev/null \
  | sed -nE "s/^'([^']*_${KCAT_VERSION}\.orig\.tar\.gz)'.*/\1/p" | head -n1)"
[[ -n "$orig_uri" ]] || { log "no $KCAT_SOURCE_PACKAGE $KCAT_VERSION source in the configured Debian archive"; exit 1; }
/usr/lib/apt/apt-helper -o "APT::Sandbox::User=root" download-file "$orig_uri" "$work/kcat.orig.tar.gz" "SHA256:$KCAT_ORIG_SHA256" >&2
tar -xzf "$work/kcat.orig.tar.gz" -C "$work"
kcat_src="$(echo "$work"/kafkacat-"$KCAT_VERSION")"

# --- build into a fresh prefix, moved into place only when complete.
rm -rf "$prefix.tmp.root"
log "building librdkafka $LIBRDKAFKA_VERSION ($jobs jobs)"
(
  cd "$src"
  ./configure --prefix="$prefix" --enable-ssl --enable-zlib --disable-gssapi --disable-curl \
    --disable-zstd --disable-lz4-ext >&2
  make -C src -j"$jobs" >&2
  make -C src install DESTDIR="$prefix.tmp.root" >&2
)
# DESTDIR keeps the build's --prefix in librdkafka.pc and the rpath while staging.
staged="$prefix.tmp.root$prefix"
rm -f "$staged"/lib/*.a # kcat links the shared library; the static ones are 56 MB

log "building kcat $KCAT_VERSION against it"
(
  cd "$kcat_src"
  export PKG_CONFIG_PATH="$staged/lib/pkgconfig"
  export CPPFLAGS="-I$staged/include" LDFLAGS="-L$staged/lib -Wl,-rpath,$prefix/lib"
  ./configure --prefix="$prefix" --disable-json --disable-avro >&2
  make -j"$jobs" >&2
  install -D -m 0755 kcat "$staged/bin/kcat"
)
rm -rf "$prefix"
mkdir -p "$(dirname "$prefix")"
mv "$staged" "$prefix"
rm -rf "$prefix.tmp.root"
echo "$want" >"$stamp"

# The kcat that was built says which librdkafka it runs with and that SCRAM and SSL are in it.
features="$("$prefix/bin/kcat" -V 2>&1)"
if ! grep -q "librdkafka $LIBRDKAFKA_VERSION" <<<"$features" || ! grep -q sasl_scram <<<"$features" || ! grep -q ssl <<<"$features"; then
  log "the built kcat is not what was asked for: $features"
  rm -rf "$prefix"
  exit 1
fi
log "$(sed -n 's/^Version/kcat/p' <<<"$features")"
echo "$prefix/bin/kcat"
