#!/usr/bin/env bash
# Installs the real agent programs the live agent tests drive (idempotent; run by scripts/test.sh
# before pytest), each at a pinned version from npm, into a cache OUTSIDE the repository:
# $TAKEBACK_AGENTS_CACHE, default ~/.cache/takeback-agents/<agent>. Also makes sure `unshare`
# and `ip` are there (the tests run each agent in a network namespace that has only loopback).
# Set TAKEBACK_SKIP_AGENTS=1 to skip it entirely.
set -euo pipefail
[ "${TAKEBACK_SKIP_AGENTS:-0}" = 1 ] && { echo "setup-agents: skipped (TAKEBACK_SKIP_AGENTS=1)"; exit 0; }
cache="${TAKEBACK_AGENTS_CACHE:-$HOME/.cache/takeback-agents}"
log() { echo "setup-agents: $*"; }

if ! command -v ip >/dev/null 2>&1 || ! command -v unshare >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing iproute2 and util-linux"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq iproute2 util-linux >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq iproute2 util-linux >/dev/null; }
  else
    log "ip or unshare is missing and apt-get is not usable here; the live agent tests will be skipped" >&2
  fi
fi

# agent name, npm package@version
agents=(
  "claude @anthropic-ai/claude-code@2.1.197"
  "qwen @qwen-code/qwen-code@0.15.10"
  "copilot @github/copilot@1.0.102"
  "gemini @google/gemini-cli@0.61.0"
  "codex @openai/codex@0.169.0"
  "opencode opencode-ai@1.18.33"
  "opencode-plugin @opencode-ai/plugin@1.18.33"
)
for entry in "${agents[@]}"; do
  name="${entry%% *}"
  package="${entry#* }"
  version="${package##*@}"
  if [ ! -f "$cache/$name/.installed-$version" ]; then
    log "installing $package into $cache/$name"
    rm -rf "${cache:?}/$name"
    mkdir -p "$cache/$name"
    npm install --prefix "$cache/$name" --no-audit --no-fund --loglevel=error "$package" >/dev/null
    touch "$cache/$name/.installed-$version"
  fi
done
log "ready: agents in $cache"
