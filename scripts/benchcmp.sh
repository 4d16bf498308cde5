#!/usr/bin/env bash
# benchcmp.sh: compare the benchmarks of two revisions with benchstat, the
# old and new test binaries run alternately so that a noisy machine's drift
# falls on both sides alike.
#
#   scripts/benchcmp.sh [-n ROUNDS] [-t BENCHTIME] [-b BENCH_REGEX]
#                       [-m MODULE_DIR] [-d OUT_DIR] [-o] OLD_REV [NEW_REV]
#
#   OLD_REV      a commit (anything git rev-parse takes: main, HEAD~3, a tag)
#   NEW_REV      another; by default the work tree as it is, uncommitted
#                and untracked files included
#   -n ROUNDS    rounds, each running both binaries once (default 8)
#   -t BENCHTIME -test.benchtime of each run: a duration (1s, the default)
#                or a count of iterations (100x)
#   -b REGEX     -test.bench (default '.': every benchmark)
#   -m DIR       the package to benchmark, relative to the repository root:
#                '.' (default, the root package) or a package of another
#                module of the repository, such as storage/etcd
#   -d OUT_DIR   where old.txt, new.txt and benchstat.txt go (default a new
#                directory under ${TMPDIR:-/tmp}, printed at the start)
#   -o           overlay: run the new side's benchmark code on both sides.
#                The old checkout's *bench*_test.go files of the package are
#                replaced with the new side's (bench_test.go,
#                bench_raw_test.go, query_bench_test.go, ...), so that a
#                benchmark added or changed since OLD_REV runs on both. It
#                fails to build if those files need code OLD_REV lacks.
#
# Each side is a checkout of its revision (git archive into a temporary
# directory, removed on exit), so another module of the repository
# (storage/etcd) builds against that revision's main module: through the
# checkout's go.work, or in revisions before it, storage/etcd's replace. Both
# binaries are built with go test -c -trimpath and run in their package's
# directory, as go test does, each run with
#   -test.run '^$' -test.bench REGEX -test.benchtime T -test.count 1 -test.benchmem
# Odd rounds run old then new, even rounds new then old. The results are
# appended to OUT_DIR/old.txt and OUT_DIR/new.txt, then compared with
#   benchstat old.txt new.txt
# (golang.org/x/perf/cmd/benchstat at a pinned version, run with go run
# from the Go module proxy; set BENCHSTAT to a benchstat command to use
# another). Benchmarks that ran on one side only are listed before the
# comparison: without -o, a benchmark newer than OLD_REV is one of them.
#
# Issue 19's speed check (memory and pebble insert, transaction of 100 and
# get; etcd's insert and transaction):
#
#   scripts/benchcmp.sh -o -b '^Benchmark(Insert|Get|Transact)$/^(memory|pebble)$' OLD_REV
#   scripts/benchcmp.sh -m storage/etcd -b '^BenchmarkTable$/^etcd$/^(Insert|Transact100)$' OLD_REV
#
# (-o because BenchmarkTransact is newer than some revisions; without it,
# those show Transact on the new side only.) BenchmarkVsRaw's
# '^BenchmarkVsRaw$/^(memory|pebble-disk)$/^(Insert|Transact100|Get)$/^localtable$'
# covers the same operations, with a cpu-ns/op column (CPU time per op,
# steadier than the wall time on a shared machine).
set -euo pipefail

BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
  exit 2
}

rounds=8 benchtime=1s regex=. moddir=. outdir= overlay=
while getopts 'n:t:b:m:d:oh' opt; do
  case $opt in
    n) rounds=$OPTARG ;;
    t) benchtime=$OPTARG ;;
    b) regex=$OPTARG ;;
    m) moddir=$OPTARG ;;
    d) outdir=$OPTARG ;;
    o) overlay=1 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 2 ] || usage
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "benchcmp: -n $rounds: want a positive count" >&2; exit 2; }

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
moddir=${moddir#./}
moddir=${moddir%/}
[ -n "$moddir" ] || moddir=.
[ -d "$root/$moddir" ] || { echo "benchcmp: no directory $moddir in $root" >&2; exit 2; }

rev() {
  git -C "$root" rev-parse --verify --quiet "$1^{commit}" ||
    { echo "benchcmp: $1: not a commit" >&2; exit 2; }
}
old_rev=$1
old_sha=$(rev "$old_rev")
if [ $# -eq 2 ]; then
  new_rev=$2
  new_sha=$(rev "$new_rev")
else
  new_rev="work tree"
  new_sha=
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/benchcmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
if [ -z "$outdir" ]; then
  outdir=$(mktemp -d "${TMPDIR:-/tmp}/benchcmp-out.XXXXXX")
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
rm -f "$outdir/old.txt" "$outdir/new.txt" "$outdir/benchstat.txt"
echo "benchcmp: output in $outdir"

# checkout SHA DIR: the tree of commit SHA, extracted into DIR.
checkout() {
  mkdir -p "$2"
  git -C "$root" archive "$1" | tar -x -C "$2"
}

checkout "$old_sha" "$tmp/old"
old_src=$tmp/old
if [ -n "$new_sha" ]; then
  checkout "$new_sha" "$tmp/new"
  new_src=$tmp/new
else
  new_src=$root
fi
old_pkg=$old_src/$moddir
new_pkg=$new_src/$moddir
[ -d "$old_pkg" ] || { echo "benchcmp: $old_rev has no directory $moddir" >&2; exit 1; }
[ -d "$new_pkg" ] || { echo "benchcmp: $new_rev has no directory $moddir" >&2; exit 1; }

if [ -n "$overlay" ]; then
  shopt -s nullglob
  rm -f "$old_pkg"/*bench*_test.go
  files=("$new_pkg"/*bench*_test.go)
  [ ${#files[@]} -gt 0 ] || { echo "benchcmp: -o: no *bench*_test.go in $new_rev's $moddir" >&2; exit 1; }
  cp "${files[@]}" "$old_pkg/"
  echo "benchcmp: -o: $new_rev's ${files[*]##*/} on $old_rev"
  shopt -u nullglob
fi

# build SIDE PKGDIR: go test -c of the package in PKGDIR, to $tmp/SIDE.test.
build() {
  local start=$SECONDS
  printf 'benchcmp: building %s (%s)...' "$1" "$( [ "$1" = old ] && echo "$old_rev" || echo "$new_rev")"
  if ! (cd "$2" && go test -c -trimpath -o "$tmp/$1.test" .); then
    echo
    if [ "$1" = old ] && [ -n "$overlay" ]; then
      echo "benchcmp: the old side does not build with $new_rev's benchmark files (-o): run without -o" >&2
    fi
    exit 1
  fi
  [ -x "$tmp/$1.test" ] || { echo; echo "benchcmp: $moddir has no test files at $1" >&2; exit 1; }
  echo " $((SECONDS - start))s"
}
build old "$old_pkg"
build new "$new_pkg"

{
  echo "old: $old_rev ${old_sha}"
  echo "new: $new_rev ${new_sha:-(work tree of $(git -C "$root" rev-parse HEAD))}"
  echo "package: $moddir  bench: $regex  benchtime: $benchtime  rounds: $rounds  overlay: ${overlay:-no}"
  go version
} >"$outdir/info.txt"

# run SIDE PKGDIR: one run of SIDE's binary, appended to SIDE.txt.
run() {
  local start=$SECONDS
  if ! (cd "$2" && "$tmp/$1.test" -test.run '^$' -test.bench "$regex" \
      -test.benchtime "$benchtime" -test.count 1 -test.benchmem) >"$tmp/run.txt" 2>&1; then
    tail -n 30 "$tmp/run.txt" >&2
    echo "benchcmp: the $1 binary failed (output above; results so far in $outdir)" >&2
    exit 1
  fi
  cat "$tmp/run.txt" >>"$outdir/$1.txt"
  printf ' %s %ds' "$1" $((SECONDS - start))
}
total=$SECONDS
for ((r = 1; r <= rounds; r++)); do
  printf 'benchcmp: round %d/%d:' "$r" "$rounds"
  if ((r % 2)); then
    run old "$old_pkg"; run new "$new_pkg"
  else
    run new "$new_pkg"; run old "$old_pkg"
  fi
  echo
done
echo "benchcmp: $rounds rounds in $((SECONDS - total))s"

names() { awk '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print $1 }' "$1" | sort -u; }
names "$outdir/old.txt" >"$tmp/old.names"
names "$outdir/new.txt" >"$tmp/new.names"
if [ ! -s "$tmp/old.names" ] && [ ! -s "$tmp/new.names" ]; then
  echo "benchcmp: no benchmark matches '$regex' in $moddir on either side" >&2
  exit 1
fi
only_old=$(comm -23 "$tmp/old.names" "$tmp/new.names")
only_new=$(comm -13 "$tmp/old.names" "$tmp/new.names")
if [ -n "$only_old" ]; then
  echo "benchcmp: only on the old side ($old_rev), not compared:"
  sed 's/^/  /' <<<"$only_old"
fi
if [ -n "$only_new" ]; then
  echo "benchcmp: only on the new side ($new_rev), not compared:"
  sed 's/^/  /' <<<"$only_new"
  [ -n "$overlay" ] || echo "  (a benchmark newer than $old_rev? -o runs the new side's benchmark code on both)"
fi

echo
cd "$outdir"
if [ -n "${BENCHSTAT:-}" ]; then
  $BENCHSTAT old.txt new.txt | tee benchstat.txt
else
  go run "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION" old.txt new.txt | tee benchstat.txt
fi
