#!/usr/bin/env bash
# fetch-code-corpora.sh: real source trees for ingest/lang's measurements
# (bench/results/notes/lang-chunking.md), pinned by package and version.
# Never commit the trees. Lays out, under $STRATA_CODE_CORPORA (default
# ~/.cache/strata/code-corpora):
#   typescript/  rxjs 7.8.1's src/ (npm package; TypeScript)
#   rust/        regex-syntax 0.6.27 and serde 1.0.152 (Debian's librust-*-dev sources)
#   java/        Apache Commons Lang 3.12.0 (Debian source package libcommons-lang3-java 3.12.0-2+deb12u1)
#   c/           Lua 5.4.4's src/ (Debian source package lua5.4 5.4.4-3+deb12u1)
#   cpp/         LevelDB 1.23 (Debian source package leveldb 1.23-4)
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
# Java, C and C++ from Debian source packages: apt-get source needs a
# deb-src entry and dpkg-dev (dpkg-source unpacks and patches the tree).
src_pkgs=("libcommons-lang3-java=3.12.0-2+deb12u1:java/commons-lang3-3.12.0:libcommons-lang3-java-3.12.0/src"
	"lua5.4=5.4.4-3+deb12u1:c/lua-5.4.4:lua5.4-5.4.4/src"
	"leveldb=1.23-4:cpp/leveldb-1.23:leveldb-1.23")
need_src=0
for e in "${src_pkgs[@]}"; do
	IFS=: read -r _ out _ <<<"$e"
	[ -d "$dest/$out" ] || need_src=1
done
if [ $need_src = 1 ]; then
	SUDO=""
	if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
	export DEBIAN_FRONTEND=noninteractive
	if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
		printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
			$SUDO tee /etc/apt/sources.list.d/strata-src.sources >/dev/null
		$SUDO apt-get update -qq
	fi
	command -v dpkg-source >/dev/null || $SUDO apt-get install -y --no-install-recommends dpkg-dev
	for e in "${src_pkgs[@]}"; do
		IFS=: read -r pv out sub <<<"$e"
		[ -d "$dest/$out" ] && continue
		tmp=$(mktemp -d)
		(cd "$tmp" && apt-get source -qq "$pv" >/dev/null 2>&1) || { (cd "$tmp" && $SUDO apt-get update -qq && apt-get source -qq "$pv" >/dev/null); }
		mkdir -p "$(dirname "$dest/$out")"
		mv "$tmp/$sub" "$dest/$out"
		rm -rf "$tmp"
	done
fi
echo "$dest"
