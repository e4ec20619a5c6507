#!/usr/bin/env bash
# System packages the tests need beyond Python: Debian's Chromium, driven by Playwright in
# tests/api/test_browser.py (never `playwright install`: it downloads its own browsers).
# Idempotent: does nothing when /usr/bin/chromium exists. Needs root (or sudo) and apt.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "system-deps: /usr/bin/chromium is missing; install Debian's chromium package as root" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "system-deps: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
