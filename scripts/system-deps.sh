#!/usr/bin/env bash
# System packages the tests need beyond Python: Debian's Chromium, driven by Playwright in
# tests/api/test_browser.py (never `playwright install`: it downloads its own browsers), and
# libGL / GLib, which OpenCV (pulled by rapidocr, curation's OCR) may load, and Noto Sans CJK
# (fonts-noto-cjk), which the mock phone draws zh-CN screens with (mockphone/fonts.py).
# Idempotent: does nothing when they are there. Needs root (or sudo) and apt.
set -euo pipefail
if [ -x /usr/bin/chromium ] && ldconfig -p | grep -q "libGL.so.1 " && ldconfig -p | grep -q "libgthread-2.0.so.0 " \
        && [ -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "system-deps: chromium, libgl1, libglib2.0-0 or fonts-noto-cjk is missing; install those Debian" \
             "packages as root" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium libgl1 libglib2.0-0 fonts-noto-cjk >/dev/null
echo "system-deps: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
