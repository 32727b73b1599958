# Sourced by the bench scripts (sh).
#
# result_file KIND: print the name of a new file for a recorded result
# in bench/results/ (results/README.md): DATE-KIND-HOST.md, or with -2,
# -3, ... when that day's file of the kind and host exists (a recorded
# file is never written again).  HERE is the bench directory.
result_file () {
  _rf_base=$here/results/$(date -u +%Y-%m-%d)-$1-$(uname -n | tr -cs 'A-Za-z0-9' '-' | sed 's/-*$//')
  _rf_f=$_rf_base.md _rf_n=2
  while [ -e "$_rf_f" ]; do
    _rf_f=$_rf_base-$_rf_n.md
    _rf_n=$((_rf_n + 1))
  done
  printf '%s\n' "$_rf_f"
}
