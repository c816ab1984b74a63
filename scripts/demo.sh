#!/usr/bin/env bash
# Quick start, command 1: set up, then run a scripted agent session against a throw-away repository.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
exec "$root/.venv/bin/takeback" demo "$@"
