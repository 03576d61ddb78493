#!/usr/bin/env bash
# peers.sh (`make peers`): the comparison engines, from Debian's packages.
#   FAISS, hnswlib (python + the C++ header), Xapian, SQLite FTS5, ripgrep, OpenBLAS
#   for FAISS's k-means, and the compilers the native peer drivers need.
# USearch comes from npm; the bench harness installs it into its cache dir.
# Debian's python packages live in /usr/bin/python3's dist-packages: the
# drivers call /usr/bin/python3 explicitly.
set -euo pipefail
"$(dirname "$0")/ensure-apt.sh" python3-faiss python3-hnswlib python3-xapian sqlite3 ripgrep python3-numpy \
	libhnswlib-dev libxapian-dev libsqlite3-dev libopenblas0-pthread g++ gcc
