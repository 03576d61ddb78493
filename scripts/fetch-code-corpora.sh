#!/usr/bin/env bash
# fetch-code-corpora.sh: real source trees for ingest/lang's measurements
# (bench/results/notes/lang-chunking.md), pinned by package and version.
# Never commit the trees. Lays out, under $STRATA_CODE_CORPORA (default
# ~/.cache/strata/code-corpora):
#   typescript/  rxjs 7.8.1's src/ (npm package; TypeScript)
#   rust/        regex-syntax 0.6.27 and serde 1.0.152 (Debian's librust-*-dev sources)
# and reuses what the machine has: the Python standard library
# (/usr/lib/python3.11), npm's own JavaScript (/usr/lib/node_modules/npm),
# and the C and C++ headers under /usr/include.
set -euo pipefail
dest=${STRATA_CODE_CORPORA:-$HOME/.cache/strata/code-corpora}
mkdir -p "$dest"

# TypeScript: the npm tarball ships its src/.
if [ ! -d "$dest/typescript/rxjs-7.8.1" ]; then
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent rxjs@7.8.1 >/dev/null && tar xzf rxjs-7.8.1.tgz)
	mkdir -p "$dest/typescript"
	mv "$tmp/package/src" "$dest/typescript/rxjs-7.8.1"
	rm -rf "$tmp"
fi

# Rust: Debian installs crate sources under /usr/share/cargo/registry.
want=("librust-regex-syntax-dev=0.6.27-1" "librust-serde-dev=1.0.152-2")
missing=()
for pv in "${want[@]}"; do
	p=${pv%%=*} v=${pv#*=}
	if [ "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || true)" != "$v" ]; then missing+=("$pv"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=""
	if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get install -y --no-install-recommends "${missing[@]}" ||
		{ $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; }
fi
mkdir -p "$dest/rust"
for d in /usr/share/cargo/registry/regex-syntax-0.6.27 /usr/share/cargo/registry/serde-1.0.152; do
	[ -d "$dest/rust/$(basename "$d")" ] || cp -r "$d" "$dest/rust/"
done
echo "$dest"
