#!/usr/bin/env bash
# Installs what the test suite drives for real: Xvnc, Fluxbox, xterm and
# friends, Chromium for the viewer page, Node.js for Playwright, the VNC
# client vncdotool, and OpenSSH (client and server) and OpenSSL for the
# remote engine of scripts/remote-engine.sh; and mold, the linker
# scripts/test.sh links the test binaries with. Safe to re-run: it installs only what is missing.
set -euo pipefail

packages=(
  tigervnc-standalone-server tigervnc-tools fluxbox xterm x11-utils xdotool xinput
  imagemagick ca-certificates curl xclip chromium at-spi2-core zenity
  openssh-client openssh-server openssl iproute2 util-linux mold
)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Node.js and npm (Playwright, noVNC): a machine that has them from any
# source keeps its own, as Debian's npm conflicts with other Node packages.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# vncdotool, a native VNC client for the VNC password test (pinned).
vncdotool_version=1.4.2
if ! command -v vncdo >/dev/null; then
  echo "installing: vncdotool==$vncdotool_version"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --root-user-action=ignore \
    "vncdotool==$vncdotool_version"
  # pyenv makes a command visible only after a rehash.
  if command -v pyenv >/dev/null; then pyenv rehash; fi
  command -v vncdo >/dev/null || { echo "vncdo is not on PATH after installing vncdotool" >&2; exit 1; }
fi

# The official MCP Python SDK (pinned), for the test that a Python client
# closes its HTTP session cleanly. It goes in a folder of its own, found by
# the test through PYTHONPATH, so it can neither break nor be broken by the
# system's Python packages.
mcp_python_version=2.3.0
mcp_python_dir="$HOME/.local/share/computer-use-mcp-tests/mcp-python-sdk"
if [ ! -f "$mcp_python_dir/mcp-$mcp_python_version.dist-info/METADATA" ]; then
  echo "installing: mcp==$mcp_python_version (Python) into $mcp_python_dir"
  rm -rf "$mcp_python_dir"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --root-user-action=ignore \
    --target "$mcp_python_dir" "mcp==$mcp_python_version"
fi
