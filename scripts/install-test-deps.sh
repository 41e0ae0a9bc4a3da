#!/usr/bin/env bash
# Installs the Debian packages the test suite drives for real: Xvnc, Fluxbox,
# xterm and friends. Safe to re-run: it installs only what is missing.
set -euo pipefail

packages=(
  tigervnc-standalone-server tigervnc-tools fluxbox xterm x11-utils xdotool
  imagemagick ca-certificates curl
)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
