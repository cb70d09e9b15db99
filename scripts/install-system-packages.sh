#!/usr/bin/env bash
# The system packages the test suite needs beyond Python:
# - Chromium, for the browser tests (tests/browser);
# - bubblewrap (`bwrap`), the sandbox that student code runs in when grading (autograder/sandbox/bubblewrap.py,
#   docs/sandbox.md), and its tests (tests/trusted);
# - a PostgreSQL server (`initdb`, `postgres`), for the PostgreSQL gradebook tests (tests/course/test_parallel.py):
#   they start their own throwaway server on 127.0.0.1 (tests/postgres.py), as Debian's `postgres` user when root;
# - Node.js and npm (Debian's `nodejs` and `npm`), and JupyterHub's proxy `configurable-http-proxy` from npm
#   (`npm install -g`), for the JupyterHub tests (tests/hub): a class on a real hub, with real Unix users.
#
# Debian's `chromium`, `bubblewrap` and `postgresql` packages, installed with apt-get when missing (with sudo
# when not root); PostgreSQL counts as installed when some /usr/lib/postgresql/*/bin or PATH has `initdb`.
# Playwright drives Chromium through its executable path; Playwright's own browser download is not used
# (machines that reach only package registries cannot fetch it).
#
# `install-system-packages.sh sandbox` installs bubblewrap only: what grading (the demo) needs.
# configurable-http-proxy counts as installed when it is on PATH; it is installed after the Debian packages.
#
# Nothing to do when all are already installed (or EPL_CHROMIUM names a Chromium). Where they cannot be
# installed (no apt-get, or not root and no sudo) this says so and, outside CI, exits 0: the browser tests, the
# sandbox tests, the PostgreSQL tests and the JupyterHub tests then skip with the reason. With CI set it exits 1,
# so that CI never skips them silently.
set -euo pipefail

missing=()
if [ "${1:-}" != "sandbox" ] && [ -z "${EPL_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1 \
        && ! command -v chromium-browser >/dev/null 2>&1; then
    missing+=(chromium)
fi
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
has_initdb() {
    local bin
    for bin in /usr/lib/postgresql/*/bin/initdb; do
        [ -x "$bin" ] && return 0
    done
    command -v initdb >/dev/null 2>&1
}
if [ "${1:-}" != "sandbox" ] && ! has_initdb; then
    missing+=(postgresql)
fi
if [ "${1:-}" != "sandbox" ]; then
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
need_proxy=0
if [ "${1:-}" != "sandbox" ] && ! command -v configurable-http-proxy >/dev/null 2>&1; then
    need_proxy=1
fi
if [ ${#missing[@]} -eq 0 ] && [ $need_proxy -eq 0 ]; then
    exit 0
fi

cannot() {
    local todo=""
    [ ${#missing[@]} -eq 0 ] || todo="apt-get install ${missing[*]}; "
    [ $need_proxy -eq 0 ] || todo="${todo}npm install -g configurable-http-proxy; "
    echo "install-system-packages: $1; do it yourself (Debian: ${todo%; })." \
         "Without Chromium (or EPL_CHROMIUM naming one) the browser tests skip; without bubblewrap the sandbox" \
         "tests skip and grading needs a sandbox that is not there (docs/sandbox.md); without a PostgreSQL" \
         "server the PostgreSQL gradebook tests skip; without configurable-http-proxy the JupyterHub tests skip." >&2
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

if [ ${#missing[@]} -gt 0 ]; then
case " ${missing[*]} " in
    *" chromium "*) echo "install-system-packages: installing ${missing[*]} with apt-get (about a minute and a half)" >&2 ;;
    *" postgresql "*) echo "install-system-packages: installing ${missing[*]} with apt-get (about half a minute)" >&2 ;;
    *) echo "install-system-packages: installing ${missing[*]} with apt-get (a few seconds after apt-get update)" >&2 ;;
esac
${as_root[@]+"${as_root[@]}"} apt-get update -q >/dev/null || cannot "apt-get update failed"
${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
    || cannot "apt-get install ${missing[*]} failed"
for package in "${missing[@]}"; do
    case "$package" in
        chromium) command -v chromium >/dev/null 2>&1 || cannot "apt-get installed no chromium command" ;;
        bubblewrap) command -v bwrap >/dev/null 2>&1 || cannot "apt-get installed no bwrap command" ;;
        postgresql) has_initdb || cannot "apt-get installed no initdb in /usr/lib/postgresql/*/bin" ;;
        nodejs) command -v node >/dev/null 2>&1 || cannot "apt-get installed no node command" ;;
        npm) command -v npm >/dev/null 2>&1 || cannot "apt-get installed no npm command" ;;
    esac
done
fi
if [ $need_proxy -eq 1 ]; then
    echo "install-system-packages: installing configurable-http-proxy with npm install -g (a few seconds)" >&2
    ${as_root[@]+"${as_root[@]}"} npm install -g --no-fund --no-audit configurable-http-proxy >/dev/null 2>&1 \
        || cannot "npm install -g configurable-http-proxy failed"
    configurable-http-proxy --version >/dev/null 2>&1 \
        || cannot "npm installed a configurable-http-proxy that does not run (node $(node --version 2>&1))"
fi
