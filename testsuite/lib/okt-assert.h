/* OKT_CHECK, the run tests' assertion, alone: for tests that are not
   OpenMP programs (the OpenACC ones), which okt-check.h's device checks
   do not fit.  */

#ifndef OKT_ASSERT_H
#define OKT_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

/* Fail loudly: the harness only looks at the exit status.  */
#define OKT_CHECK(cond)							\
  do {									\
    if (!(cond))							\
      {									\
	fprintf (stderr, "%s:%d: check failed: %s\n", __FILE__,		\
		 __LINE__, #cond);					\
	abort ();							\
      }									\
  } while (0)

#endif
