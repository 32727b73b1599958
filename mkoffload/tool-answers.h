/* What ptxas and nvlink say about themselves (ptxas --help: the
   architectures it takes; ptxas --version and nvlink --version: what the
   cache keys hold), asked once per tool rather than on every link.

   Each start of ptxas, a 40 MB static program, costs tens of
   milliseconds, about half of them in the kernel; a link whose cubins
   all come from the cache starts no other CUDA tool, so these questions
   were a large part of what such a link spent beyond GCC's own work.  The answers are kept
   in mkoffload's cache directory (cache.h), named by the question and the
   identity of the tool's file: its path, device, inode, size, and
   modification and status-change times.  Another toolkit, or the same
   one installed again, is another file and is asked again; the
   status-change time cannot be set back by hand.  */

#ifndef OFFLOADKIT_MKOFFLOAD_TOOL_ANSWERS_H
#define OFFLOADKIT_MKOFFLOAD_TOOL_ANSWERS_H

/* The standard output of TOOL run with the one argument ARG, when it
   exits with status 0 and prints something (malloc'd, NUL-terminated);
   NULL when it does not, or cannot be run (nothing is reported: the
   callers do without).  Taken from, or stored in, the cache directory
   DIR when DIR is not NULL; only answers of successful runs are kept.  */
char *mko_tool_answer (const char *dir, const char *tool, const char *arg);

/* Ask TOOL ARG in the background, unless the cache directory DIR has
   the answer: the next mko_tool_answer for the same question collects it
   (and keeps it).  For the questions a link asks only after the accel
   compiler, which runs for a tenth of a second (hello-offload.c) to
   seconds (GCC's largest libgomp tests) with a CPU to spare: each start
   of ptxas costs tens of milliseconds, and with an empty cache the three
   questions were all the link did between the accel compiler's end and
   the first ptxas compile.  The answer is kept in the cache only when
   the tool's file is still the one asked.  A question the link never
   needed (the versions when no cubin is built; any when the link failed
   first) is collected when the program exits, before its temporary
   files go, and its answer kept: no tool outlives the link.  A cleanup
   signal does not wait for them: only questions that write no file are
   asked so (ptxas' and nvlink's --help and --version write none).  */
void mko_tool_answer_ahead (const char *dir, const char *tool,
			    const char *arg);

#endif /* OFFLOADKIT_MKOFFLOAD_TOOL_ANSWERS_H */
