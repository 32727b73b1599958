#!/bin/bash
# make check's runtest: DejaGnu over several .exp files at a time.
#
#   parallel-runtest.sh [runtest arguments...]
#
# Stands in for runtest (Makefile.am sets RUNTEST to it).  Under make -jN
# (N > 1, read from MAKEFLAGS), when the arguments hold nothing but
# runtest's --tool and --srcdir, VAR=VALUE settings and .exp file names
# (none: every .exp file of the tool), it runs one runtest per .exp file,
# N at a time, the longest first (as the last run's log timed them), each
# with its own output directory and its own TMPDIR for what it runs
# (the setting OFFLOADKIT_RUN_TMPDIR), and then writes the tool's .sum and
# .log as a single runtest would have: every .exp file's results in
# runtest's order, the counts added up.  Anything else (-v,
# --target_board, make without -j) runs runtest once, as automake's rule
# does.
#
# The test files are written to run side by side: each keeps its scratch
# directories to itself (offloadkit_tmpdir, its own *-work directory),
# and mkoffload's cache of compiled objects is safe for concurrent links.
#
# The real runtest is $REAL_RUNTEST, else runtest on PATH.
set -u
runtest=${REAL_RUNTEST:-runtest}

whole () { exec "$runtest" "$@"; }

jobs=1
for w in ${MAKEFLAGS-}; do
  case $w in
    -j) jobs=8 ;;                     # make -j: no limit of its own
    -j[0-9]*) jobs=${w#-j} ;;
  esac
done
case $jobs in ''|*[!0-9]*) jobs=1 ;; esac

tool= srcdir= settings=() names=()
args=("$@")
while [ $# -gt 0 ]; do
  case $1 in
    --tool) [ $# -ge 2 ] || whole "${args[@]}"; tool=$2; shift 2 ;;
    --srcdir) [ $# -ge 2 ] || whole "${args[@]}"; srcdir=$2; shift 2 ;;
    *.exp) names+=("${1##*/}"); shift ;;
    [A-Za-z_]*=*) settings+=("$1"); shift ;;
    *) whole "${args[@]}" ;;
  esac
done
[ "$jobs" -gt 1 ] && [ -n "$tool" ] && [ -n "$srcdir" ] || whole "${args[@]}"

# The .exp files in runtest's order (by directory, then name); a name
# given matches the file of that name in any of the tool's directories.
exps=()
while IFS= read -r f; do
  if [ ${#names[@]} -gt 0 ]; then
    for n in "${names[@]}"; do
      [ "${f##*/}" = "$n" ] && { exps+=("$f"); break; }
    done
  else
    exps+=("$f")
  fi
done < <(cd "$srcdir" && ls -d "$tool".*/*.exp 2>/dev/null \
	   | LC_ALL=C sort -t/ -k1,1 -k2,2)
[ ${#exps[@]} -ge 2 ] || whole "${args[@]}"

# Longest first: the seconds the last run's log gives each .exp file
# ("testcase DIR/X.exp completed in N seconds"); without a log (a fresh
# build tree), the seconds of a typical run below, a hint that only
# balances the jobs; else 0, in runtest's order.
declare -A secs=(
  [$tool.mkoffload/aot.exp]=45 [$tool.gcn-mkoffload/gcn-mkoffload.exp]=45
  [$tool.gcn/gcn.exp]=40 [$tool.c/c.exp]=30 [$tool.oacc/oacc.exp]=20
  [$tool.mkoffload/toolkits.exp]=20 [$tool.mkoffload/mkoffload.exp]=20
  [$tool.system/system.exp]=20 [$tool.fortran/fortran.exp]=15
  [$tool.cuda/cuda.exp]=15 [$tool.plugin/plugin.exp]=15
)
if [ -f "$tool.log" ]; then
  while read -r f n; do
    secs[$f]=$n
  done < <(sed -n "s|^testcase .*/\\($tool\\.[^/]*/[^/]*\\.exp\\) completed in \\([0-9]*\\) seconds\$|\\1 \\2|p" "$tool.log")
fi
order=()
while read -r _ _ f; do
  order+=("$f")
done < <(for i in "${!exps[@]}"; do
	   printf '%s %s %s\n' "${secs[${exps[$i]}]:-0}" "$i" "${exps[$i]}"
	 done | sort -k1,1nr -k2,2n)

work=$PWD/tmp/dejagnu
rm -rf "$work" && mkdir -p "$work" || exit 1

# One .exp file: output in $work/PART (PART: the file's path, / as _).
run_one () {
  local f=$1 part=${1//\//_}
  local dir=$work/$part
  mkdir -p "$dir/tmpdir"
  "$runtest" --tool "$tool" --srcdir "$srcdir" --outdir "$dir" \
    "${settings[@]}" OFFLOADKIT_RUN_TMPDIR="$dir/tmpdir" "${f##*/}" \
    > "$dir/stdout" 2>&1
  echo $? > "$dir/status"
  # What runtest prints between its header and its summary: the
  # "Running" line and the results other than passes.
  sed -n '/^Running \//,/=== .* Summary ===/{/=== .* Summary ===/d;/^$/d;p}' \
    "$dir/stdout"
}

running=0
for f in "${order[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  run_one "$f" &
  running=$((running + 1))
done
wait

status=0
sums=() logs=()
for f in "${exps[@]}"; do
  dir=$work/${f//\//_}
  [ "$(cat "$dir/status" 2>/dev/null)" = 0 ] || status=1
  if [ -f "$dir/$tool.sum" ] && [ -f "$dir/$tool.log" ]; then
    sums+=("$dir/$tool.sum") logs+=("$dir/$tool.log")
  else
    echo "parallel-runtest: runtest of $f wrote no $tool.sum; its output:" >&2
    cat "$dir/stdout" >&2
    status=1
  fi
done
[ ${#sums[@]} -gt 0 ] || exit 1

# DejaGnu's .sum and .log of all the parts: the first part's header, each
# part's body, one summary with the counts added up.
merge () {
  awk -v tool="$tool" -v now="$(LC_ALL=C date '+%a %b %e %H:%M:%S %Y')" '
    FNR == 1 { part++; body = 0; insum = 0 }
    /^\t\t=== .* Summary ===$/ { body = 0; insum = 1; next }
    /^Running \// { body = 1; insum = 0 }
    insum && /^# of / {
      n = $NF; label = $0; sub(/[ \t]+[0-9]+$/, "", label)
      if (!(label in count))
        pad[label] = substr($0, length(label) + 1,
			    length($0) - length(label) - length(n))
      count[label] += n; next
    }
    insum && /completed at/ { done = 1; next }
    part == 1 && !body && !insum { print; next }
    body { print }
    END {
      printf "\n\t\t=== %s Summary ===\n\n", tool
      # In the order DejaGnu prints them; any other after them.
      nk = split("expected passes|unexpected failures|unexpected successes|" \
		 "expected failures|unknown successes|known failures|" \
		 "unresolved testcases|untested testcases|unsupported tests|" \
		 "paths in test names|duplicate test names", known, "|")
      for (i = 1; i <= nk; i++)
        if (("# of " known[i]) in count) {
          l = "# of " known[i]; print l pad[l] count[l]; delete count[l]
        }
      for (l in count) print l pad[l] count[l]
      if (done) print "runtest completed at " now
    }' "$@"
}
merge "${sums[@]}" > "$tool.sum"
merge "${logs[@]}" > "$tool.log"

sed -n '/=== .* Summary ===/,$p' "$tool.sum"
rm -rf "$work"
exit $status
