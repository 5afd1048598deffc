#!/usr/bin/env bash
# Installs the Debian packages the test suite needs and pip/npm cannot provide.
# Does nothing when they are already present; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=()
# chromium + chromium-driver: the browser tests drive Debian's Chromium through Playwright
# (tests/browser/; Playwright's own browser download needs network the suite may not have).
for cmd_pkg in "node:nodejs" "npm:npm" "chromium:chromium" "chromedriver:chromium-driver"; do
  cmd=${cmd_pkg%%:*}; pkg=${cmd_pkg#*:}
  command -v "$cmd" >/dev/null 2>&1 || packages+=("$pkg")
done
# chromium-headless-shell (optional): the same engine without the full browser's compositor,
# which the browser tests prefer when it is there (tests/browser/chromium.py), as does a crawl
# that renders pages (ingest/crawler/render.py): about a third less CPU for the browser tests,
# a fifth of the CPU per rendered page. Without it both use chromium.
optional=()
command -v chromium-headless-shell >/dev/null 2>&1 || optional+=("chromium-headless-shell")
# python3.11-doc (optional): Debian's build of the Python manual, real Sphinx output nobody
# here wrote, which tests/ingest/test_parser_structure.py parses (and `make test-llm` reads);
# without it that test is skipped.
[ -d /usr/share/doc/python3.11/html ] || optional+=("python3.11-doc")

if [ ${#packages[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ]; then
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
apt_install() {
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@"
}
if [ ${#packages[@]} -gt 0 ]; then
  echo "Installing system packages: ${packages[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  apt_install "${packages[@]}"
fi
if [ ${#optional[@]} -gt 0 ]; then
  echo "Installing optional system packages: ${optional[*]}"
  { [ ${#packages[@]} -gt 0 ] || "${sudo_cmd[@]}" apt-get update -qq; } && apt_install "${optional[@]}" \
    || echo "Could not install ${optional[*]}: the browser tests and rendering crawls use chromium instead; the test that reads the Python manual is skipped."
fi
