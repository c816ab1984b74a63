#!/usr/bin/env bash
# Installs Emacs with eglot for the eglot editor test (idempotent; run by scripts/test.sh before
# pytest): Debian's emacs-nox (28.2) and elpa-eglot (1.9). Without them that test is skipped.
set -euo pipefail

if ! command -v emacs >/dev/null 2>&1 || ! emacs --batch -q --eval "(progn (require 'eglot) (kill-emacs 0))" >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-emacs: installing Debian's emacs-nox and elpa-eglot" >&2
    export DEBIAN_FRONTEND=noninteractive
    packages=(emacs-nox elpa-eglot)
    apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null; }
  else
    echo "setup-emacs: emacs with eglot is missing and apt-get is not usable here (not root?); the eglot test will be skipped" >&2
  fi
fi
