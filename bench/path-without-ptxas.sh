# Sourced by the bench scripts (sh).
#
# path_without_ptxas: print $PATH less every directory that holds a
# ptxas.  GCC 12's own nvptx pipeline runs the ptxas it finds for sm_35,
# which CUDA 12's and 13's refuse, so its links get this PATH.
path_without_ptxas () {
  _pwp_out= _pwp_ifs=$IFS
  IFS=:
  for _pwp_d in $PATH; do
    [ -n "$_pwp_d" ] && [ ! -e "$_pwp_d/ptxas" ] \
      && _pwp_out=${_pwp_out:+$_pwp_out:}$_pwp_d
  done
  IFS=$_pwp_ifs
  printf '%s\n' "$_pwp_out"
}
