#!/usr/bin/env bash
# The system packages the test suite needs beyond Python:
# - Chromium, for the browser tests (tests/browser);
# - bubblewrap (`bwrap`), the sandbox that student code runs in when grading (autograder/trusted/sandbox.py,
#   docs/sandbox.md), and its tests (tests/trusted);
# - a PostgreSQL server (`initdb`, `postgres`), for the PostgreSQL gradebook tests (tests/course/test_parallel.py):
#   they start their own throwaway server on 127.0.0.1 (tests/postgres.py), as Debian's `postgres` user when root.
#
# Debian's `chromium`, `bubblewrap` and `postgresql` packages, installed with apt-get when missing (with sudo
# when not root); PostgreSQL counts as installed when some /usr/lib/postgresql/*/bin or PATH has `initdb`.
# Playwright drives Chromium through its executable path; Playwright's own browser download is not used
# (machines that reach only package registries cannot fetch it).
#
# `install-system-packages.sh sandbox` installs bubblewrap only: what grading (the demo) needs.
#
# Nothing to do when all are already installed (or EPL_CHROMIUM names a Chromium). Where they cannot be
# installed (no apt-get, or not root and no sudo) this says so and, outside CI, exits 0: the browser tests, the
# sandbox tests and the PostgreSQL tests then skip with the reason. With CI set it exits 1, so that CI never
# skips them silently.
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
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

cannot() {
    echo "install-system-packages: $1; install ${missing[*]} yourself (Debian: apt-get install ${missing[*]})." \
         "Without Chromium (or EPL_CHROMIUM naming one) the browser tests skip; without bubblewrap the sandbox" \
         "tests skip and grading needs a sandbox that is not there (docs/sandbox.md); without a PostgreSQL" \
         "server the PostgreSQL gradebook tests skip." >&2
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
    esac
done
