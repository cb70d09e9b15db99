#!/usr/bin/env bash
# The system packages the test suite needs beyond Python: Chromium, for the browser tests (tests/browser).
#
# Debian's `chromium` package, installed with apt-get when no Chromium is found (with sudo when not root).
# Playwright drives it through its executable path; Playwright's own browser download is not used
# (machines that reach only package registries cannot fetch it).
#
# Nothing to do when Chromium is already installed or EPL_CHROMIUM names one. Where it cannot be
# installed (no apt-get, or not root and no sudo) this says so and, outside CI, exits 0: the browser
# tests then skip with the reason. With CI set it exits 1, so that CI never skips them silently.
set -euo pipefail

if [ -n "${EPL_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi

cannot() {
    echo "install-system-packages: $1; install Chromium yourself (Debian: apt-get install chromium)" \
         "or set EPL_CHROMIUM to a Chromium binary. Without it the browser tests skip." >&2
    if [ -n "${CI:-}" ]; then exit 1; fi
    exit 0
}

command -v apt-get >/dev/null 2>&1 || cannot "no apt-get on this machine"
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)          # asks for a password only where sudo needs one and there is a terminal
    [ -t 0 ] || as_root=(sudo -n)
else
    cannot "not root and no sudo"
fi

echo "install-system-packages: installing Chromium with apt-get (about a minute and a half)" >&2
${as_root[@]+"${as_root[@]}"} apt-get update -q >/dev/null || cannot "apt-get update failed"
${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
    || cannot "apt-get install chromium failed"
command -v chromium >/dev/null 2>&1 || cannot "apt-get installed no chromium command"
