#!/usr/bin/env bash
# fuzz.sh [seconds-per-target]: run every Go fuzz target of the module for a
# fixed time each (default 10 s) and fail if any finds a crasher.
#
# Targets are found with `go test -list 'Fuzz.*'` in every package whose
# test files declare one. A crasher is written by `go test` to the package's
# testdata/fuzz/<Target>/ directory; commit it to make it a regression seed
# (the seed corpora always run as part of plain `go test`).
#
# Environment: FUZZ_PARALLEL (fuzzing workers per target, default 1: the
# machines are shared), FUZZ_MINIMIZE (time to minimize each new input,
# default 5s: go test minimizes interesting inputs too, and counts no execs
# meanwhile), FUZZ_PKGS (space-separated package patterns instead
# of ./...), FUZZ_MATCH (regexp; only targets whose name matches run).
set -u -o pipefail

secs="${1:-10}"
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
	echo "usage: $0 [seconds-per-target]  (a positive integer, got '$secs')" >&2
	exit 2
fi
parallel="${FUZZ_PARALLEL:-1}"
minimize="${FUZZ_MINIMIZE:-5s}"
match="${FUZZ_MATCH:-.}"

cd "$(dirname "$0")/.." || exit 2

# Packages with at least one fuzz target in a test file.
mapfile -t pkgs < <(
	go list -f '{{.ImportPath}} {{.Dir}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' ${FUZZ_PKGS:-./...} |
		while read -r path dir files; do
			for f in $files; do
				if grep -q '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' "$dir/$f"; then
					echo "$path"
					break
				fi
			done
		done
)
if [ "${#pkgs[@]}" -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 1
fi

failed=()
ran=0
for pkg in "${pkgs[@]}"; do
	if ! targets=$(go test -list 'Fuzz.*' "$pkg" 2>&1); then
		echo "FAIL $pkg: cannot list targets:" >&2
		echo "$targets" >&2
		failed+=("$pkg (build)")
		continue
	fi
	for target in $(echo "$targets" | grep '^Fuzz' | grep -E -- "$match"); do
		ran=$((ran + 1))
		echo "=== $pkg $target (${secs}s)"
		out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "${secs}s" -fuzzminimizetime "$minimize" -parallel "$parallel" "$pkg" 2>&1)
		status=$?
		echo "$out"
		if [ "$status" -ne 0 ]; then
			# Go's fuzzing engine sometimes ends a run that hit -fuzztime
			# while minimizing a new input with "context deadline
			# exceeded" and no failing input: that is the engine's clock,
			# not a finding. A real finding always writes its input.
			if ! grep -q 'Failing input written to' <<<"$out" && grep -q 'context deadline exceeded' <<<"$out"; then
				echo "fuzz.sh: $pkg $target: the engine stopped at its deadline (no failing input); not a finding"
			else
				failed+=("$pkg $target")
			fi
		fi
	done
done

echo "fuzz.sh: $ran targets, ${#failed[@]} failed"
if [ "${#failed[@]}" -ne 0 ]; then
	printf '  FAIL %s\n' "${failed[@]}" >&2
	exit 1
fi
