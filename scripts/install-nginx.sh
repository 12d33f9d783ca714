#!/usr/bin/env bash
# Unpacks Debian's nginx binary into .cache/nginx/ for the test that puts the README's reverse
# proxy configuration in front of gateway workers (test/gateway/cluster-nginx.test.ts). The
# package is downloaded and unpacked, not installed: installing it would start a system nginx
# on port 80. Its libraries (OpenSSL, PCRE2, zlib) are already there for PostgreSQL and Node.
# Idempotent and quiet.
#   --print-path   print the path of the nginx binary (unpacking first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=".cache/nginx"
binary="$prefix/usr/sbin/nginx"

if [ ! -x "$binary" ]; then
  echo "install-nginx: unpacking Debian's nginx into $prefix" >&2
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  # apt's sandbox user must be able to write the download folder.
  chmod 0777 "$download"
  (cd "$download" && apt-get download -qq nginx >/dev/null 2>&1) || {
    if [ "$(id -u)" = "0" ]; then apt-get update -qq >/dev/null; else sudo apt-get update -qq >/dev/null; fi
    (cd "$download" && apt-get download -qq nginx >/dev/null)
  }
  rm -rf "$prefix"
  mkdir -p "$prefix"
  dpkg-deb -x "$download"/nginx_*.deb "$prefix"
  [ -x "$binary" ] || { echo "install-nginx: $binary missing after unpacking" >&2; exit 1; }
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$binary"
fi
