#!/usr/bin/env bash
# Installs strace (idempotent; run by scripts/test.sh before pytest): the crash-point and
# disk-error tests (tests/core/test_crash_points.py) kill or fail `takeback` at each of its
# mutating system calls with strace's fault injection. Without it those tests are skipped.
set -euo pipefail

if ! command -v strace >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-faults: installing Debian's strace" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq strace >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq strace >/dev/null; }
  else
    echo "setup-faults: strace is missing and apt-get is not usable here (not root?); the crash-point tests will be skipped" >&2
  fi
fi
