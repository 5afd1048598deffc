#!/usr/bin/env bash
# Installs the Debian packages the test suite needs and pip/npm cannot provide.
# Does nothing when they are already present; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=()
# chromium + chromium-driver: the browser tests drive Debian's Chromium through Playwright
# (tests/browser/; Playwright's own browser download needs network the suite may not have).
# chromium-headless-shell: the same engine without the full browser's compositor, which the
# browser tests prefer (tests/browser/chromium.py): about half the CPU per page.
for cmd_pkg in "node:nodejs" "npm:npm" "chromium:chromium" "chromedriver:chromium-driver" \
  "chromium-headless-shell:chromium-headless-shell"; do
  cmd=${cmd_pkg%%:*}; pkg=${cmd_pkg#*:}
  command -v "$cmd" >/dev/null 2>&1 || packages+=("$pkg")
done

if [ ${#packages[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing system packages: ${packages[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}"
