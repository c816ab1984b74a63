#!/usr/bin/env bash
# Installs the Debian tools some tests drive (idempotent; run by scripts/test.sh before pytest):
# strace, whose fault injection kills or fails `takeback` at each of its mutating system calls
# (tests/core/test_crash_points.py; without it those tests are skipped), and less, the pager a
# long answer at a terminal goes through (server/takeback/pager.py; tests/cli/test_pager.py
# drives the real one in a pseudo-terminal).
set -euo pipefail

missing=()
for tool in strace less; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-faults: installing Debian's ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null; }
  else
    echo "setup-faults: ${missing[*]} missing and apt-get is not usable here (not root?); the crash-point tests are skipped and the pager test fails" >&2
  fi
fi
