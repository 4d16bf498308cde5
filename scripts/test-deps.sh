#!/usr/bin/env bash
# Installs what the tests drive beyond Go, when it is missing:
#   chromium      the browser tests (CORS from a page of another origin)
#   python3-azure the Python SDK (azure-data-tables) end-to-end test
# Node.js and npm drive the JS SDK tests and clients/js; the npm packages
# themselves are installed by the tests (npm ci) from the committed lock
# files. python3-azure also drives clients/python's suite.
# Without these, the tests that need them skip with a message, except under
# CI=true, where they fail: CI runs this script first.
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
/usr/bin/python3 -c 'import azure.data.tables' >/dev/null 2>&1 || need+=(python3-azure)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)

if [ ${#need[@]} -eq 0 ]; then
  echo "test dependencies: all present"
  exit 0
fi
echo "test dependencies: installing ${need[*]}"
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "test dependencies: installed ${need[*]}"
