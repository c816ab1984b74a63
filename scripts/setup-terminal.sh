#!/usr/bin/env bash
# Installs less (idempotent; run by scripts/test.sh before pytest): long answers at a terminal go
# through it (server/takeback/pager.py), and tests/cli/test_pager.py drives the real one in a
# pseudo-terminal. Without it that test fails (a pager that cannot start is skipped at run time).
set -euo pipefail

if ! command -v less >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-terminal: installing Debian's less" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq less >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq less >/dev/null; }
  else
    echo "setup-terminal: less is missing and apt-get is not usable here (not root?); tests/cli/test_pager.py will fail" >&2
  fi
fi
