# Sourced by the install-*.sh scripts, each keeping one pinned npm package (and what it pulls)
# in a folder of .cache/ of its own, outside the package's dependencies.

# cached_version <package.json>: the version it names; nothing when the file is missing.
cached_version() {
  [ -f "$1" ] || return 0
  node -e 'process.stdout.write(require(require("path").resolve(process.argv[1])).version)' "$1"
}

# install_into_cache <script> <folder> <package@version> <file it must give> [npm flags...]:
# installs afresh into <folder>, saying so on stderr, and fails when <file> is then missing.
install_into_cache() {
  local script=$1 folder=$2 spec=$3 expected=$4
  shift 4
  echo "$script: installing $spec into $folder" >&2
  rm -rf "$folder"
  mkdir -p "$folder"
  printf '{"name":"%s-cache","private":true}\n' "$(basename "$folder")" >"$folder/package.json"
  npm install --prefix "$folder" --no-audit --no-fund --no-save --loglevel=error "$@" "$spec" \
    >/dev/null
  [ -e "$expected" ] || { echo "$script: $expected missing after install" >&2; exit 1; }
}
