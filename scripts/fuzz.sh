#!/usr/bin/env bash
# fuzz.sh: run every fuzz target of the repository, one after the other,
# for FUZZTIME each. CI runs it with a small budget (.ci/run); run it
# locally with a large one to fuzz for long.
#
#   scripts/fuzz.sh [-l] [REGEX]
#
#   REGEX    run only the targets whose "PKG NAME" matches it (grep -E),
#            for example 'filter' or 'FuzzBatch$'
#   -l       list the targets and exit
#
#   FUZZTIME          -fuzztime of each target (default 5s; 10m, 1h, or a
#                     count of executions such as 100000x)
#   FUZZMINIMIZETIME  -fuzzminimizetime (default 1s): the time spent
#                     shrinking a new interesting input, short so that the
#                     budget goes to fuzzing (a crasher is still minimized
#                     for up to this long)
#   FUZZPARALLEL      -parallel: the fuzzing workers (default GOMAXPROCS)
#
# The targets are the func Fuzz... of every *_test.go file that git tracks
# or would track, in the main module and the modules inside it (bench,
# storage/etcd), each run from its own module. go test fuzzes one target
# per invocation, so they run one at a time, without go test's -timeout
# (a hanging input is caught by the fuzzer itself). A target that fails
# only with Go's "context deadline exceeded" as its time runs out, and
# writes no input, is not a failure: a race in Go's fuzzing coordinator
# before Go 1.27 (go.dev/issue/75804). At the first failure the
# script stops, says where the crashing input was written (the package's
# testdata/fuzz/NAME/...) and how to keep it as a regression case.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

list=false
if [ "${1:-}" = "-l" ]; then
  list=true
  shift
fi
pattern="${1:-.}"
fuzztime="${FUZZTIME:-5s}"
minimize="${FUZZMINIMIZETIME:-1s}"
parallel=()
if [ -n "${FUZZPARALLEL:-}" ]; then
  parallel=(-parallel "$FUZZPARALLEL")
fi

# reldir prints directory $1 relative to the repository ("." for its root).
reldir() {
  local d
  d=$(cd "$1" && pwd)
  if [ "$d" = "$root" ]; then echo .; else echo "${d#"$root"/}"; fi
}

# moduleof prints the directory of the module holding directory $1.
moduleof() {
  local d=$1
  while [ ! -f "$d/go.mod" ]; do
    d=$(dirname "$d")
  done
  echo "$d"
}

# The targets, one per line: module directory, package (./dir, relative to
# the module), name.
targets=()
while IFS= read -r f; do
  case "$f" in */testdata/*|testdata/*|*/vendor/*) continue ;; esac
  dir=$(dirname "$f")
  mod=$(moduleof "$dir")
  pkg=./${dir#"$mod"}
  pkg=${pkg%/}
  pkg=${pkg/#.\/\//.\/}
  [ "$mod" = "$dir" ] && pkg=.
  for name in $(grep -ho '^func Fuzz[A-Za-z0-9_]*(' "$f" | sed 's/^func //; s/($//'); do
    if echo "$mod/$pkg $name" | grep -Eq -- "$pattern"; then
      targets+=("$mod $pkg $name")
    fi
  done
done < <(git ls-files -co --exclude-standard -- '*_test.go' | sed 's|^|./|' | sort)

if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz target matches $pattern" >&2
  exit 1
fi
if $list; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi

echo "fuzz.sh: ${#targets[@]} targets, -fuzztime $fuzztime each, -fuzzminimizetime $minimize"
start=$SECONDS
flaked=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
  read -r mod pkg name <<<"$t"
  t0=$SECONDS
  dir=$(reldir "$mod/$pkg")
  printf '%-28s %-24s ' "$dir" "$name"
  if (cd "$mod" && go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" -timeout 0 "${parallel[@]}" "$pkg") >"$log" 2>&1; then
    echo "ok ($((SECONDS - t0))s)"
    continue
  fi
  # Go before 1.27 may fail a target whose -fuzztime ran out with a bare
  # "context deadline exceeded" and no crasher: a race in its fuzzing
  # coordinator (go.dev/issue/75804), not a finding.
  if ! grep -q 'Failing input written to' "$log" &&
    grep -A1 -- "^--- FAIL: $name " "$log" | tail -n 1 | grep -Eq '^[[:space:]]+context deadline exceeded$'; then
    echo "ok ($((SECONDS - t0))s; go.dev/issue/75804: \"context deadline exceeded\" as the time ran out, no crasher)"
    flaked=$((flaked + 1))
    continue
  fi
  echo "FAIL ($((SECONDS - t0))s)"
  cat "$log"
  echo
  crasher=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | head -n 1)
  if [ -n "$crasher" ]; then
    path=$dir/$crasher
    path=${path#./}
    echo "fuzz.sh: $name failed; the crashing input is $root/$path"
    if [ "$mod" = . ]; then
      echo "  reproduce: go test -run '^$name/${crasher##*/}\$' $pkg"
    else
      echo "  reproduce: (cd $mod && go test -run '^$name/${crasher##*/}\$' $pkg)"
    fi
    echo "  once fixed, commit it so that go test runs it every time:"
    echo "    git add $path"
  else
    echo "fuzz.sh: $name failed before fuzzing (a build error, or a seed input failing): see above"
  fi
  echo "fuzz.sh: stopped after $((SECONDS - start))s"
  exit 1
done
echo "fuzz.sh: ${#targets[@]} targets fuzzed in $((SECONDS - start))s ($flaked ended by go.dev/issue/75804)"
