# Planner and output matcher for check-libgomp.sh (run with tclsh).
#
#   tclsh check-libgomp.tcl plan SRCROOT JOBDIR [FILTER [device [MODELS]]]
#       Select GCC 12's libgomp offloading run tests under SRCROOT (the
#       extracted libgomp/testsuite), read their dg directives and write
#       one job directory per test instance under JOBDIR, each holding
#       job.sh (shell assignments read by check-libgomp.sh) and, for
#       dg-output, output.re.  Prints the job directories, one a line.
#       With "device", selectors describe a machine with an offload
#       device (see below).
#   tclsh check-libgomp.tcl match RE_FILE OUTPUT_FILE
#       Exit 0 iff the Tcl regular expression in RE_FILE matches the text
#       of OUTPUT_FILE (dg-output semantics).
#
# Tcl because the directives are Tcl lists ({ dg-do run { target X } }).
#
# Selection rule (printed by check-libgomp.sh too): a file of libgomp.c,
# libgomp.c++, libgomp.c-c++-common or libgomp.fortran (recursively) is a
# test when
#   - it contains an OpenMP target construct: a line starting with
#     "#pragma omp target", "#pragma omp declare target" or, in Fortran,
#     "!$omp target" / "!$omp declare target" (also c$omp / *$omp);
#   - its dg-do is run (the default when there is none): dg-do compile
#     and dg-do link files are left out;
#   - it is not only a helper: no other file names it in
#     dg-additional-sources, and a C/C++ file defines main.
# libgomp.c-c++-common files give two instances, compiled as C and C++.
#
# Selectors (target/xfail/skip lists, dg-require-effective-target) are
# evaluated per pipeline, as GCC's testsuite would on the machine each
# describes.  The baseline's: GCC configured for nvptx offloading but no
# offload device, so offload_device* are false and offload_target_nvptx is
# true.  Ours runs on a device with memory of its own (an emulated one, or
# a GPU): offload_device and offload_device_nonshared_as are true.  So a
# test expecting libgomp's error for a device with separate memory expects
# it with ours only, and one that is only for the host ("dg-do run { target
# { ! offload_device } }") is not run with ours (HOST-ONLY).  In device
# mode (a GPU machine, both pipelines running on it) the baseline has a
# device too, and both pipelines get the same expectations.

# -------------------------------------------------------------- selectors

# Effective-target keywords; unknown ones are false (and reported).
proc et_value { kw lang } {
    global et_unknown cpu_flags
    set kw [string trim $kw]
    switch -glob -- $kw {
	c { return [expr { $lang eq "c" }] }
	c++ { return [expr { $lang eq "c++" }] }
	fortran { return [expr { $lang eq "fortran" }] }
	offload_device - offload_device_nonshared_as {
	    # True only when planning the device-only runs (see plan).
	    global device_mode
	    return $device_mode
	}
	omp_usm {
	    # Unified shared memory: ours on an emulated device, which
	    # gives it to programs that require it from libgomp 15; never
	    # the baseline (host fallback), nor a GPU plan (whose GPU may
	    # not reach pageable memory).
	    global device_mode gpu_plan
	    return [expr { $device_mode && !$gpu_plan
			   && [info exists ::env(CLG_LIBGOMP_MAJOR)]
			   && $::env(CLG_LIBGOMP_MAJOR) >= 15 }]
	}
	offload_device* { return 0 }
	offload_target_nvptx { return 1 }
	offload_target_amdgcn { return 0 }
	offload_target_any { return 1 }
	openacc_nvidia_accel_selected - openacc_nvidia_accel_present {
	    return [expr { $::acc_type eq "nvidia" }]
	}
	openacc_host_selected { return [expr { $::acc_type eq "host" }] }
	openacc_radeon_accel_selected - openacc_radeon_accel_present {
	    return 0
	}
	openacc_nvidia_accel_configured { return 1 }
	openacc_cuda - openacc_cublas - openacc_cudart {
	    # Programs that call CUDA's libraries on the device's data:
	    # there is no CUDA beside an emulated device (the known limit
	    # "CUDA library interop").
	    return 0
	}
	__OPTIMIZE__ { return [expr { $::opt_level ne "-O0" }] }
	lp64 { return 1 }
	ilp32 { return 0 }
	lto { return 1 }
	alias { return 1 }
	large_long_double { return 1 }
	__float128 { return 1 }
	vect_simd_clones { return 1 }
	pthread { return 1 }
	fopenmp { return 1 }
	run_expensive_tests { return 0 }
	sse2_runtime { return [expr { [lsearch $cpu_flags sse2] >= 0 }] }
	avx_runtime { return [expr { [lsearch $cpu_flags avx] >= 0 }] }
	avx2_runtime { return [expr { [lsearch $cpu_flags avx2] >= 0 }] }
	*-*-* { return [string match $kw x86_64-pc-linux-gnu] }
    }
    set et_unknown($kw) 1
    return 0
}

# Evaluate a selector expression: a list of keywords, triplet globs,
# &&, ||, ! and nested lists.  A list of plain words (no operator) is true
# when any of them is ("{ i?86-*-* x86_64-*-* }").
proc sel_eval { sel lang } {
    set has_op 0
    foreach e $sel {
	if { $e in { && || ! } } { set has_op 1 }
    }
    if { !$has_op } {
	foreach e $sel {
	    if { [llength $e] > 1 } {
		if { [sel_eval $e $lang] } { return 1 }
	    } elseif { [et_value $e $lang] } {
		return 1
	    }
	}
	return 0
    }
    set x ""
    foreach e $sel {
	if { $e in { && || ! } } {
	    append x " $e "
	} elseif { [llength $e] > 1 } {
	    append x " [sel_eval $e $lang] "
	} else {
	    append x " [et_value $e $lang] "
	}
    }
    return [expr $x]
}

# A dg selector argument: "{ target X }", "{ xfail X }", or a bare list.
# Returns 1 when it selects (the directive applies).
proc sel_applies { arg lang } {
    if { [llength $arg] == 0 } { return 1 }
    set head [lindex $arg 0]
    if { $head eq "target" || $head eq "xfail" } {
	return [sel_eval [lrange $arg 1 end] $lang]
    }
    return [sel_eval $arg $lang]
}

# Whether the option lists of directive DV (from element 3 on: the
# options that must be there, then those that must not) allow it for the
# test's FLAGS, as DejaGnu's check_conditional_xfail decides: one flag
# matching one pattern of the first list ("*" matches any set, also an
# empty one), and none matching the second.
proc opts_apply { dv flags } {
    if { [llength $dv] <= 3 } { return 1 }
    set inc [lindex $dv 3]
    set exc [lindex $dv 4]
    set hit 0
    foreach pat $inc {
	if { $pat eq "*" } { set hit 1; break }
	foreach f $flags {
	    if { $pat ne "" && [string match $pat $f] } { set hit 1; break }
	}
	if { $hit } { break }
    }
    if { !$hit } { return 0 }
    foreach pat $exc {
	foreach f $flags {
	    if { $pat ne "" && [string match $pat $f] } { return 0 }
	}
    }
    return 1
}

# ------------------------------------------------------------- directives

# The { dg-... } directives of FILE as a list of lists.
proc read_directives { file } {
    set f [open $file r]
    set text [read $f]
    close $f
    set out {}
    foreach line [split $text "\n"] {
	if { ![regexp {\{\s*(dg-[-a-z0-9_]+.*)\}} $line -> body] } { continue }
	# The directive ends at its own closing brace: take the longest
	# prefix of BODY that is a complete Tcl list.
	set d ""
	for { set i [string length $body] } { $i > 0 } { incr i -1 } {
	    set cand [string range $body 0 [expr { $i - 1 }]]
	    if { [info complete $cand] && ![catch { llength $cand }] } {
		set d $cand
		break
	    }
	}
	if { $d eq "" || [catch { lindex $d 0 }] } { continue }
	lappend out $d
    }
    return $out
}

proc has_target_construct { file lang } {
    set f [open $file r]
    set text [read $f]
    close $f
    if { $lang eq "fortran" } {
	return [regexp -nocase -line \
		    {^\s*[!c*]\$omp\s+(target|declare\s+target)} $text]
    }
    return [regexp -line {^\s*#\s*pragma\s+omp\s+(target|declare\s+target)} \
		$text]
}

proc has_main { file lang } {
    if { $lang eq "fortran" } { return 1 }
    set f [open $file r]
    set text [read $f]
    close $f
    return [regexp {(^|[^A-Za-z0-9_])main\s*\(} $text]
}

# ------------------------------------------------------------------ plan

proc shq { s } {
    return "'[string map [list ' '\\''] $s]'"
}

proc find_files { dir globs } {
    set out {}
    foreach g $globs {
	foreach f [glob -nocomplain -directory $dir -types f $g] {
	    lappend out $f
	}
    }
    foreach d [glob -nocomplain -directory $dir -types d *] {
	set out [concat $out [find_files $d $globs]]
    }
    return $out
}

# The reason DIRECTIVES make a test unsupported for LANG ("" if none),
# for the selectors that decide it (dg-do's target, dg-require-*,
# dg-skip-if).
proc plan_unsupported { directives lang } {
    set why ""
    foreach dv $directives {
	switch -- [lindex $dv 0] {
	    dg-do {
		if { [llength $dv] > 2
		     && ![sel_applies [lindex $dv 2] $lang] } {
		    set why "dg-do run not for this target"
		}
	    }
	    dg-require-effective-target {
		if { ![sel_eval [lindex $dv 1] $lang] } {
		    set why "requires [lindex $dv 1]"
		}
	    }
	    dg-skip-if {
		if { [sel_applies [lindex $dv 2] $lang] } {
		    set why "dg-skip-if [lindex $dv 1]"
		}
	    }
	}
    }
    return $why
}

# What the directives DIRS of test FILE say for language LANG on a machine
# with (DEVICE 1) or without an offload device: a dict of do (the dg-do
# action), opts, srcs, envs, shouldfail, xfail, unsupported (why, or ""),
# output_re and output_xfail (1: the output test is expected to fail).
# CFG says how the test is compiled: OPTS0, the options before the test's
# own (OpenMP: -O2, which dg-options replaces; OpenACC:
# the torture level and the configuration's, which stay), ACC the
# OpenACC device type configured ("" for OpenMP tests), LEVEL the
# optimisation level.
proc plan_fields { f dirs_ lang device cfg } {
    set saved [list $::device_mode $::acc_type $::opt_level]
    set ::device_mode $device
    set ::acc_type [dict get $cfg acc]
    set ::opt_level [dict get $cfg level]
    set acc [expr { $::acc_type ne "" }]
    set do run
    set do_sel 1
    set opts [dict get $cfg opts0]
    set testopts {}
    set addopts {}
    set srcs [list $f]
    set envs {}
    set shouldfail 0
    set xfail 0
    set unsupported ""
    set output_re ""
    set output_xfail 0
    # The test's own options first: skip and xfail lists look at all.
    foreach dv $dirs_ {
	switch -- [lindex $dv 0] {
	    dg-options {
		if { [sel_applies [lindex $dv 2] $lang] } {
		    set testopts [lindex $dv 1]
		}
	    }
	    dg-additional-options {
		if { [sel_applies [lindex $dv 2] $lang] } {
		    lappend addopts [lindex $dv 1]
		}
	    }
	}
    }
    if { $acc } {
	set opts [concat $opts $testopts {*}$addopts]
    } elseif { $testopts ne "" } {
	set opts [concat $testopts {*}$addopts]
    } else {
	set opts [concat $opts {*}$addopts]
    }
    foreach dv $dirs_ {
	set name [lindex $dv 0]
	switch -- $name {
	    dg-do {
		set do [lindex $dv 1]
		if { [llength $dv] > 2
		     && ![sel_applies [lindex $dv 2] $lang] } {
		    set do_sel 0
		}
	    }
	    dg-add-options {
		if { [lindex $dv 1] eq "__float128" } {
		    # Nothing needed on x86_64.
		}
	    }
	    dg-additional-sources {
		foreach s [lindex $dv 1] {
		    lappend srcs [file normalize \
				      [file join [file dirname $f] $s]]
		}
	    }
	    dg-require-effective-target {
		if { ![sel_eval [lindex $dv 1] $lang] } {
		    set unsupported "requires [lindex $dv 1]"
		}
	    }
	    dg-require-alias { }
	    dg-skip-if {
		if { [sel_applies [lindex $dv 2] $lang]
		     && [opts_apply $dv $opts] } {
		    set unsupported "dg-skip-if [lindex $dv 1]"
		}
	    }
	    dg-xfail-if - dg-xfail-run-if {
		if { [sel_applies [lindex $dv 2] $lang]
		     && [opts_apply $dv $opts] } {
		    set xfail 1
		}
	    }
	    dg-shouldfail {
		if { [llength $dv] < 3
		     || [sel_applies [lindex $dv 2] $lang] } {
		    set shouldfail 1
		}
	    }
	    dg-set-target-env-var {
		lappend envs "[lindex $dv 1]=[lindex $dv 2]"
	    }
	    dg-output {
		# As DejaGnu's dg-output: a pattern marked { xfail X } is
		# asked for all the same, and where X applies the output
		# test as a whole is expected to fail (XFAIL when the
		# output does not match, XPASS when it does).
		set sel [lindex $dv 2]
		if { [lindex $sel 0] eq "xfail" } {
		    append output_re [lindex $dv 1]
		    if { [sel_applies $sel $lang] } {
			set output_xfail 1
		    }
		} elseif { [llength $dv] < 3 || [sel_applies $sel $lang] } {
		    append output_re [lindex $dv 1]
		}
	    }
	}
    }
    if { !$do_sel } { set unsupported "dg-do run not for this target" }
    if { $acc } {
	# GCC's OpenACC testsuite forces the device type it configured.
	set envs [concat [list ACC_DEVICE_TYPE=$::acc_type] $envs]
    }

    lassign $saved ::device_mode ::acc_type ::opt_level
    return [dict create do $do opts $opts srcs $srcs \
	envs $envs shouldfail $shouldfail xfail $xfail \
	unsupported $unsupported output_re $output_re \
	output_xfail $output_xfail]
}

# How GCC's OpenACC testsuite (libgomp.oacc-c/c.exp and its siblings)
# compiles a test for device type TYPE (host or nvidia) at torture level
# LEVEL: the options before the test's own and the offload target.
proc acc_cfg { type level root } {
    if { $type eq "host" } {
	set opts [list $level -DACC_DEVICE_TYPE_host=1 -DACC_MEM_SHARED=1]
	set model {-fopenacc -foffload=disable}
    } else {
	set opts [list $level -DACC_DEVICE_TYPE_nvidia=1 -DACC_MEM_SHARED=0 \
		      -I$root/libgomp.oacc-c-c++-common]
	set model {-fopenacc -foffload=nvptx-none}
    }
    return [dict create opts0 $opts acc $type level $level model $model]
}

proc plan { root jobdir filter models } {
    global et_unknown
    set dirs {
	libgomp.c {c {*.c} openmp}
	libgomp.c++ {c++ {*.C} openmp}
	libgomp.c-c++-common {{c c++} {*.c} openmp}
	libgomp.fortran {fortran {*.f *.F *.f90 *.F90 *.f95 *.f03 *.f08} openmp}
	libgomp.oacc-c {c {*.c} openacc}
	libgomp.oacc-c++ {c++ {*.C} openacc}
	libgomp.oacc-c-c++-common {{c c++} {*.c} openacc}
	libgomp.oacc-fortran {fortran {*.f *.F *.f90 *.F90 *.f95 *.f03 *.f08} openacc}
    }
    # Files named by dg-additional-sources anywhere are helpers.
    set helpers {}
    set candidates {}
    foreach {d spec} $dirs {
	set model [lindex $spec 2]
	if { $model ni $models } { continue }
	foreach f [lsort [find_files $root/$d [lindex $spec 1]]] {
	    lappend candidates $f $d [lindex $spec 0] $model
	    foreach dir [read_directives $f] {
		if { [lindex $dir 0] eq "dg-additional-sources" } {
		    foreach s [lindex $dir 1] {
			lappend helpers [file normalize \
					     [file join [file dirname $f] $s]]
		    }
		}
	    }
	}
    }

    set n 0
    foreach {f d langs model} $candidates {
	set rel [string range $f [expr { [string length $root] + 1 }] end]
	if { [file normalize $f] in $helpers } { continue }
	# Every file of the OpenACC directories is a test, as there.
	if { $model eq "openmp"
	     && ![has_target_construct $f [lindex $langs 0]] } { continue }
	set dirs_ [read_directives $f]
	foreach lang $langs {
	    if { ![has_main $f $lang] } { break }
	    if { $model eq "openmp" } {
		set cfg [dict create opts0 -O2 acc "" level -O2 \
			     model {-fopenmp -foffload=nvptx-none}]
		set variants [list "" $cfg $cfg]
	    } else {
		# GCC's OpenACC testsuite tortures offloading configurations
		# at -O0 and -O2; the host's configuration, the baseline
		# (or GCC's own nvidia one on a machine with a device), is
		# compiled at the same level.
		set btype [expr { $::device_mode ? "nvidia" : "host" }]
		set variants {}
		foreach level {-O0 -O2} {
		    lappend variants " $level" [acc_cfg $btype $level $root] \
			[acc_cfg nvidia $level $root]
		}
	    }
	    foreach {suffix bcfg ocfg} $variants {
		set id $rel
		if { [llength $langs] > 1 } { append id " \[$lang\]" }
		append id $suffix
		if { $filter ne "" && ![regexp -- $filter $id] } { continue }
		plan_job $f $dirs_ $lang $id $bcfg $ocfg $jobdir $n
		incr n
	    }
	}
    }
    foreach kw [lsort [array names et_unknown]] {
	puts stderr "check-libgomp: note: unknown effective target '$kw' taken as false"
    }
}

# Write job directory number N under JOBDIR for instance ID of test F
# (directives DIRS_) in LANG, compiled for the baseline as BCFG and for
# ours as OCFG say (plan_fields), and print its name.
proc plan_job { f dirs_ lang id bcfg ocfg jobdir n } {
    set base [plan_fields $f $dirs_ $lang $::device_mode $bcfg]
    set ours [plan_fields $f $dirs_ $lang 1 $ocfg]
    if { [dict get $base do] ne "run" } { return }

    set driver [dict get {c gcc c++ g++ fortran gfortran} $lang]
    # Link flags of GCC's libgomp testsuite: Fortran target regions
    # (STOP, I/O) need libgfortran on the device as well.
    set extra [dict get {c {-lm} c++ {-lm} \
			     fortran {-foffload=-lgfortran}} $lang]
    regsub -all {[^A-Za-z0-9_.+-]} $id _ jname
    set jd [file join $jobdir [format "%04d-%s" $n $jname]]
    file mkdir $jd
    # Unsupported in both: not run.  In the baseline only: DEVICE-ONLY
    # (ours alone runs it).  With ours only: HOST-ONLY (not run).
    set ub [dict get $base unsupported]
    set uo [dict get $ours unsupported]
    set unsupported ""
    if { $ub ne "" && $uo ne "" } { set unsupported $ub }
    set o [open $jd/job.sh w]
    puts $o "ID=[shq $id]"
    puts $o "LANG_=[shq $lang]"
    puts $o "DRIVER=[shq $driver]"
    puts $o "SRCS=[shq [dict get $base srcs]]"
    puts $o "LIBS=[shq $extra]"
    puts $o "UNSUPPORTED=[shq $unsupported]"
    puts $o "BASE_SKIP=[expr { $unsupported eq "" && $ub ne "" }]"
    puts $o "OURS_SKIP=[expr { $unsupported eq "" && $uo ne "" }]"
    foreach {p fields cfg} [list BASE $base $bcfg OURS $ours $ocfg] {
	puts $o "${p}_MODEL=[shq [dict get $cfg model]]"
	puts $o "${p}_OPTS=[shq [dict get $fields opts]]"
	puts $o "${p}_ENVS=[shq [dict get $fields envs]]"
	puts $o "${p}_SHOULDFAIL=[dict get $fields shouldfail]"
	puts $o "${p}_XFAIL=[dict get $fields xfail]"
	puts $o "${p}_OUTPUT_XFAIL=[dict get $fields output_xfail]"
	set re [dict get $fields output_re]
	if { $re ne "" } {
	    set r [open $jd/output-[string tolower $p].re w]
	    puts -nonewline $r $re
	    close $r
	}
    }
    close $o
    puts $jd
}

# ------------------------------------------------------------------ main

set device_mode 0
set gpu_plan 0
set acc_type ""
set opt_level -O2
set cpu_flags {}
catch {
    set f [open /proc/cpuinfo r]
    regexp -line {^flags\s*:\s*(.*)$} [read $f] -> cpu_flags
    close $f
}

switch -- [lindex $argv 0] {
    plan {
	if { [lindex $argv 4] eq "device" } {
	    set device_mode 1
	    set gpu_plan 1
	}
	set models [split [lindex $argv 5] ,]
	if { $models eq "" } { set models {openmp openacc} }
	plan [file normalize [lindex $argv 1]] [lindex $argv 2] \
	    [lindex $argv 3] $models
    }
    match {
	set f [open [lindex $argv 1] r]
	set re [read $f]
	close $f
	set f [open [lindex $argv 2] r]
	fconfigure $f -translation binary
	set text [read $f]
	close $f
	exit [expr { [regexp -- $re $text] ? 0 : 1 }]
    }
    default {
	puts stderr "usage: tclsh check-libgomp.tcl plan SRCROOT JOBDIR \[FILTER \[device|- \[openmp,openacc\]\]\] | match RE_FILE OUTPUT_FILE"
	exit 2
    }
}
