#!/usr/bin/env bash
# publish-check.sh: proves that the repository's modules can be consumed as
# published, the way users get them:
#
#   go install github.com/localtable/localtable/cmd/localtable@latest
#   go install github.com/localtable/localtable/storage/etcd/cmd/localtable@latest
#   go get github.com/localtable/localtable@latest github.com/localtable/localtable/storage/etcd@latest
#
# It publishes the work tree (tracked and untracked files, not ignored
# ones) as a release would: a snapshot commit tagged vX.Y.Z and
# storage/etcd/vX.Y.Z, X.Y.Z being the version of the library that
# storage/etcd/go.mod requires (storage/etcd/README.md, Releasing). The go
# command makes the two modules' zips from that commit, as the Go module
# proxy makes them from GitHub (GOPROXY=direct, the GitHub URL redirected
# to the snapshot by git's url.insteadOf); they go into a file-based module
# proxy. Then, with a fresh module cache, no workspace (GOWORK=off) and
# GOPROXY=file://that proxy (third-party modules from this machine's module
# cache, file:// too: no network), it installs both commands @latest, runs
# them, and builds and runs a program of a new module that go-gets the
# library and the etcd module @latest.
#
# Everything happens under a temporary directory, removed on exit. It
# takes a few minutes on a fresh build cache (the commands compile from
# scratch); the etcd module's TestPublishedModules runs it, skipped with
# -short.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
lib=github.com/localtable/localtable
version=$(awk -v lib="$lib" '($1 == lib) { print $2 } ($1 == "require" && $2 == lib) { print $3 }' "$root/storage/etcd/go.mod")
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  { echo "publish-check: storage/etcd/go.mod requires $lib at '$version', not a release version vX.Y.Z" >&2; exit 1; }
realcache=$(go env GOMODCACHE)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/publish-check.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
echo "publish-check: publishing the work tree as $lib $version and $lib/storage/etcd $version (in $tmp)"

# The snapshot, tagged as a release.
repo=$tmp/repo
mkdir -p "$repo"
(cd "$root" && git ls-files -z -co --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -x -C "$repo"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=publish-check -c user.email=publish-check@localhost commit -qm snapshot
git -C "$repo" tag "$version"
git -C "$repo" tag "storage/etcd/$version"

export GOWORK=off GOTOOLCHAIN=local GOFLAGS=-modcacherw GOSUMDB=off
# Outside any module from here on: in one, go mod download would record
# the snapshot's checksums in its go.sum.
cd "$tmp"
# The modules' zips, made by the go command from the tags.
GOMODCACHE=$tmp/fetch GOPROXY=direct GOPRIVATE=$lib GIT_ALLOW_PROTOCOL=file \
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="url.file://$repo.insteadOf" GIT_CONFIG_VALUE_0="https://$lib" \
  go mod download "$lib@$version" "$lib/storage/etcd@$version"
proxy=$tmp/proxy
for mod in "$lib" "$lib/storage/etcd"; do
  mkdir -p "$proxy/$mod/@v"
  cp "$tmp/fetch/cache/download/$mod/@v/$version".{info,mod,zip} "$proxy/$mod/@v/"
  echo "$version" >"$proxy/$mod/@v/list"
done

# As a user would, from the proxy alone.
export GOMODCACHE=$tmp/modcache GOPROXY="file://$proxy,file://$realcache/cache/download" GONOSUMDB= GOPRIVATE= GOBIN=$tmp/bin
go install "$lib/cmd/localtable@latest"
mv "$tmp/bin/localtable" "$tmp/bin/localtable-plain"
go install "$lib/storage/etcd/cmd/localtable@latest"
if "$tmp/bin/localtable-plain" serve --etcd 127.0.0.1:1 >"$tmp/plain.txt" 2>&1 || ! grep -q 'without etcd support' "$tmp/plain.txt"; then
  echo "publish-check: the plain command's serve --etcd:" >&2; cat "$tmp/plain.txt" >&2; exit 1
fi
"$tmp/bin/localtable" serve --help >"$tmp/etcd.txt" 2>&1 || true
grep -q -- '--etcd-prefix' "$tmp/etcd.txt" ||
  { echo "publish-check: the etcd build's serve --help names no --etcd-prefix:" >&2; cat "$tmp/etcd.txt" >&2; exit 1; }
echo "publish-check: go install of both commands @latest: ok"

mkdir "$tmp/app"
cd "$tmp/app"
go mod init -q example.com/app 2>/dev/null || go mod init example.com/app
cat >main.go <<'GO'
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/localtable/localtable"
	_ "github.com/localtable/localtable/storage/etcd"
)

func main() {
	ctx := context.Background()
	a, err := localtable.Open(nil)
	if err == nil {
		var t *localtable.Table
		if t, err = a.CreateTable(ctx, "Published"); err == nil {
			_, err = t.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"})
		}
		a.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ok")
}
GO
go get "$lib@latest" "$lib/storage/etcd@latest"
grep -q "$lib $version" go.mod && grep -q "$lib/storage/etcd $version" go.mod ||
  { echo "publish-check: go get chose other versions:" >&2; cat go.mod >&2; exit 1; }
[ "$(go run .)" = ok ] || { echo "publish-check: the program of the new module failed" >&2; exit 1; }
echo "publish-check: go get of the library and the etcd module @latest in a new module: ok"
