# Sourced by the bench scripts (sh), after they set HERE (the bench
# directory) and define die.

# bench_topbuild DIR: print the absolute build tree DIR, or, when DIR is
# empty, the current directory when it is one (it has libgomp-plugin/),
# else ./build; die when there is none.
bench_topbuild () {
  _bt_dir=$1
  if [ -z "$_bt_dir" ]; then
    if [ -d libgomp-plugin ]; then _bt_dir=.; else _bt_dir=./build; fi
  fi
  (cd "$_bt_dir" 2>/dev/null && pwd) \
    || die "no build directory '$_bt_dir': give --topbuild BUILD"
}

# result_file KIND: print the name of a new file for a recorded result
# in bench/results/ (results/README.md): DATE-KIND-HOST.md, or with -2,
# -3, ... when that day's file of the kind and host exists (a recorded
# file is never written again).
result_file () {
  _rf_base=$here/results/$(date -u +%Y-%m-%d)-$1-$(uname -n | tr -cs 'A-Za-z0-9' '-' | sed 's/-*$//')
  _rf_f=$_rf_base.md _rf_n=2
  while [ -e "$_rf_f" ]; do
    _rf_f=$_rf_base-$_rf_n.md
    _rf_n=$((_rf_n + 1))
  done
  printf '%s\n' "$_rf_f"
}

# bench_report REPORT KIND OUT SAVE: show the table in file REPORT, and
# copy it to OUT (when not empty) and, when SAVE is yes, to a new file of
# KIND in bench/results/.
bench_report () {
  cat "$1"
  if [ -n "$3" ]; then
    cp "$1" "$3" && echo "bench: written to $3"
  fi
  if [ "$4" = yes ]; then
    mkdir -p "$here/results"
    _br_f=$(result_file "$2")
    cp "$1" "$_br_f" && echo "bench: written to $_br_f"
  fi
}
