/* The start of a declare target block in offloadkit's run tests:
   "begin declare target" where the compiler has it, GCC 13 and newer
   (GCC 16 warns of the clause-less "declare target", which OpenMP 5.2
   deprecates); GCC 12 knows only the older form.  Both end with
   "#pragma omp end declare target".  */

#ifndef OKT_DECLARE_TARGET_H
#define OKT_DECLARE_TARGET_H

#if __GNUC__ >= 13
#define OKT_BEGIN_DECLARE_TARGET _Pragma ("omp begin declare target")
#else
#define OKT_BEGIN_DECLARE_TARGET _Pragma ("omp declare target")
#endif

#endif /* OKT_DECLARE_TARGET_H */
