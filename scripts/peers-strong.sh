#!/usr/bin/env bash
# peers-strong.sh (`make peers-strong`): FAISS 1.7.3 built for AVX2 from
# Debian's own source package, as a second, strong FAISS peer beside the
# generic python3-faiss build that `make peers` installs.
#
# Result, built once and reused:
#   ${STRATA_CACHE:-~/.cache/strata}/faiss-1.7.3-avx2/
#     src/                     the unpacked Debian source (orig + debian/patches)
#     build/faiss/libfaiss_avx2.so
#     include/faiss/...        the headers the driver compiles against
#     STAMP                    written last; its presence means "complete"
#
# Configuration: -DFAISS_OPT_LEVEL=avx2, BLAS = OpenBLAS (pthread), no python,
# no GPU, no tests; only the faiss_avx2 target, -j${STRATA_JOBS:-2}.
# Adds a deb-src entry for bookworm main only when no deb-src entry exists.
set -euo pipefail
VERSION=1.7.3
root="${STRATA_CACHE:-$HOME/.cache/strata}/faiss-$VERSION-avx2"
if [ -f "$root/STAMP" ] && [ -f "$root/build/faiss/libfaiss_avx2.so" ]; then
	echo "peers-strong: $root is built" >&2
	exit 0
fi
here="$(cd "$(dirname "$0")" && pwd)"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

"$here/ensure-apt.sh" cmake g++ make libopenblas-dev liblapack-dev dpkg-dev

# A deb-src entry, only if none is configured yet.
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "peers-strong: adding a deb-src entry (/etc/apt/sources.list.d/strata-src.sources)" >&2
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
		$SUDO tee /etc/apt/sources.list.d/strata-src.sources >/dev/null
	$SUDO apt-get update
fi
if ! apt-cache showsrc faiss 2>/dev/null | grep -q "^Version: $VERSION"; then
	$SUDO apt-get update
fi

mkdir -p "$root"
if [ ! -f "$root/src/CMakeLists.txt" ]; then
	tmp="$(mktemp -d "$root/fetch.XXXXXX")"
	(cd "$tmp" && apt-get source --download-only "faiss=$VERSION-2" && dpkg-source -x faiss_$VERSION-2.dsc src)
	rm -rf "$root/src"
	mv "$tmp/src" "$root/src"
	rm -rf "$tmp"
fi

cmake -S "$root/src" -B "$root/build" \
	-DCMAKE_BUILD_TYPE=Release \
	-DFAISS_OPT_LEVEL=avx2 \
	-DFAISS_ENABLE_GPU=OFF \
	-DFAISS_ENABLE_PYTHON=OFF \
	-DFAISS_ENABLE_C_API=OFF \
	-DBUILD_TESTING=OFF \
	-DBUILD_SHARED_LIBS=ON \
	-DBLA_VENDOR=OpenBLAS
cmake --build "$root/build" --target faiss_avx2 -j"${STRATA_JOBS:-2}"

# The headers, laid out as <faiss/...> for the driver.
rm -rf "$root/include"
mkdir -p "$root/include"
(cd "$root/src" && find faiss -name '*.h' -print0 | xargs -0 cp --parents -t "$root/include")
date -u +%FT%TZ >"$root/STAMP"
echo "peers-strong: built $root/build/faiss/libfaiss_avx2.so" >&2
