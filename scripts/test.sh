#!/usr/bin/env bash
# The project's test command (README.md, .ci/run): installs the Debian packages the tests need
# when they are missing (apt-get, as root or through sudo), installs the npm dependencies when
# node_modules is absent, then runs `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
while read -r pkg; do
  case "$pkg" in ''|'#'*) continue ;; esac
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done < scripts/test-packages.txt
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "test.sh: installing Debian packages the tests need: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -d node_modules ] || npm ci --no-audit --no-fund
npm test
