#!/usr/bin/env bash
# versitygw.sh: installs the pinned versitygw (the S3 server the object-store
# tests start on loopback, internal/testenv/s3gw) into
# ${STRATA_CACHE:-~/.cache/strata}/versitygw-$VERSION/versitygw, once.
# v1.8.0 evaluates conditional writes (If-None-Match / If-Match) under a
# per-key publish lock (backend/posix objlock.go), so two racing
# conditional PUTs never both succeed; vfs/objstore's race test checks it.
set -euo pipefail
VERSION=v1.8.0
dir="${STRATA_CACHE:-$HOME/.cache/strata}/versitygw-$VERSION"
if [ -x "$dir/versitygw" ]; then
	exit 0
fi
mkdir -p "$dir"
echo "versitygw.sh: go install github.com/versity/versitygw/cmd/versitygw@$VERSION -> $dir"
GOBIN="$dir" go install "github.com/versity/versitygw/cmd/versitygw@$VERSION"
