#!/usr/bin/env bash
# ensure-apt.sh PKG...: install the Debian packages that are not installed yet.
# Runs apt-get as root, or through sudo; runs apt-get update only if needed.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
missing=()
for pkg in "$@"; do
	if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then continue; fi
	missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "ensure-apt: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
	$SUDO apt-get update
	$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
