/* The fake libcuda's JIT linker: link states collect inputs (each one
   checked as it comes, as the driver compiles it), and the "linked" image
   is a container of them that cuModuleLoadData reads back (image.c).
   Errors and information go to the log buffers given at creation.  See
   fake-cuda.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda.h"

void
fk_put_log (char *buf, size_t size, size_t *size_out, const char *text)
{
  if (buf == NULL || size == 0)
    return;
  snprintf (buf, size, "%s", text);
  if (size_out != NULL)
    *size_out = strlen (buf) + 1;
}

static struct fk_link *
fk_link_find (CUlinkState s)
{
  return fake_handle_get (&fk_handles, FK_H_LINK, s);
}

/* A call on STATE failed with E (injected): say so in its error log, as
   the JIT would, and return E.  Called without FK_LOCK.  */
static CUresult
fk_link_failed (CUlinkState state, CUresult e, const char *text)
{
  pthread_mutex_lock (&fk_lock);
  struct fk_link *l = fk_link_find (state);
  if (l != NULL)
    fk_put_log (l->error_log, l->error_log_size, l->error_log_size_out, text);
  pthread_mutex_unlock (&fk_lock);
  return e;
}

/* Free link state L and what it holds.  */
static void
fk_link_free (struct fk_link *l)
{
  for (int i = 0; i < l->ninputs; i++)
    free (l->inputs[i].data);
  free (l->inputs);
  /* Poison what cuLinkComplete returned: it dies with the state.  */
  if (l->linked != NULL)
    memset (l->linked, 0xdd, 16);
  free (l->linked);
  fake_handle_free (&fk_handles, FK_H_LINK, l);
}

int
fk_links_drop (struct fk_ctx *ctx)
{
  int n = 0;
  for (;;)
    {
      struct fk_link *l, *found = NULL;
      FAKE_HANDLES_EACH (&fk_handles, FK_H_LINK, l)
	if (l->ctx == ctx)
	  found = l;
      if (found == NULL)
	return n;
      fk_link_free (found);
      n++;
    }
}

/* cuLinkCreate_v2 and cuLinkCreate, SYM.  */
static CUresult
fk_link_create (int sym, unsigned int nopts, CUjit_option *opts, void **vals,
		CUlinkState *out)
{
  if (out == NULL || (nopts > 0 && (opts == NULL || vals == NULL)))
    {
      fk_bad (sym, "NULL argument");
      return CUDA_ERROR_INVALID_VALUE;
    }
  struct fk_link *l = fake_handle_new (&fk_handles, FK_H_LINK, sizeof *l);
  if (l == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  for (unsigned i = 0; i < nopts; i++)
    {
      if (opts[i] < 0 || opts[i] >= FK_JIT_NUM_OPTIONS)
	{
	  fk_bad (sym, "JIT option %d", opts[i]);
	  fake_handle_free (&fk_handles, FK_H_LINK, l);
	  return CUDA_ERROR_INVALID_VALUE;
	}
      switch (opts[i])
	{
	case FK_JIT_ERROR_LOG_BUFFER:
	  l->error_log = vals[i];
	  break;
	case FK_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
	  l->error_log_size = (size_t) (uintptr_t) vals[i];
	  l->error_log_size_out = (size_t *) &vals[i];
	  break;
	case FK_JIT_INFO_LOG_BUFFER:
	  l->info_log = vals[i];
	  break;
	case FK_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
	  l->info_log_size = (size_t) (uintptr_t) vals[i];
	  l->info_log_size_out = (size_t *) &vals[i];
	  break;
	default:
	  break;
	}
    }
  l->ctx = fk_current ();
  *out = l;
  return CUDA_SUCCESS;
}

CUresult
cuLinkCreate_v2 (unsigned int nopts, CUjit_option *opts, void **vals,
		 CUlinkState *out)
{
  ENTER (cuLinkCreate_v2);
  NEED_CTX (cuLinkCreate_v2);
  RETURN (fk_link_create (FK_cuLinkCreate_v2, nopts, opts, vals, out));
}

/* cuLinkCreate (CUDA driver API): the entry point of drivers before CUDA
   6.5, which cuda.h now maps to cuLinkCreate_v2; the same arguments and
   behaviour.  */
CUresult
cuLinkCreate (unsigned int nopts, CUjit_option *opts, void **vals,
	      CUlinkState *out)
{
  ENTER (cuLinkCreate);
  NEED_CTX (cuLinkCreate);
  RETURN (fk_link_create (FK_cuLinkCreate, nopts, opts, vals, out));
}

/* cuLinkAddData_v2 and cuLinkAddData, SYM: after the entry checks.  */
static CUresult
fk_link_add (int sym, CUlinkState state, CUjitInputType type, void *data,
	     size_t size, const char *name)
{
  struct fk_link *l = fk_link_find (state);
  if (l == NULL)
    {
      fk_bad (sym, "%p is not a live link state", (void *) state);
      return CUDA_ERROR_INVALID_HANDLE;
    }
  if (data == NULL || size == 0
      || (type != FK_JIT_INPUT_PTX && type != FK_JIT_INPUT_CUBIN))
    {
      fk_bad (sym, "input %s: %s", name ? name : "(unnamed)",
	      data == NULL || size == 0 ? "no data"
	      : "input type not supported by the fake");
      return CUDA_ERROR_INVALID_VALUE;
    }
  /* Compile (check) at once, as the driver does.  */
  struct fk_image img = { 0 };
  char err[512] = "";
  CUresult r = fk_parse_input (type, data, size, fk_sm, &img, err,
			       sizeof err);
  fk_image_free (&img);
  if (r != CUDA_SUCCESS)
    {
      char msg[700];
      snprintf (msg, sizeof msg, "%s (input %s)", err, name ? name : "?");
      fk_put_log (l->error_log, l->error_log_size, l->error_log_size_out, msg);
      fk_log ("link add failed: %d: %s", r, msg);
      return r;
    }
  struct fk_input *ni = realloc (l->inputs, (size_t) (l->ninputs + 1)
				      * sizeof *ni);
  if (ni == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  l->inputs = ni;
  unsigned char *copy = malloc (size + 1);
  if (copy == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy (copy, data, size);
  copy[size] = '\0';
  ni[l->ninputs++] = (struct fk_input) { type, size + 1, copy };
  return CUDA_SUCCESS;
}

CUresult
cuLinkAddData_v2 (CUlinkState state, CUjitInputType type, void *data,
		  size_t size, const char *name, unsigned int nopts,
		  CUjit_option *opts, void **vals)
{
  (void) nopts;
  (void) opts;
  (void) vals;
  CUresult e = fk_enter (FK_cuLinkAddData_v2);
  if (e != CUDA_SUCCESS)
    return fk_link_failed (state, e,
			   "fake ptxas: injected failure of cuLinkAddData_v2");
  NEED_CTX (cuLinkAddData_v2);
  RETURN (fk_link_add (FK_cuLinkAddData_v2, state, type, data, size, name));
}

/* cuLinkAddData (CUDA driver API): the entry point of drivers before CUDA
   6.5, which cuda.h now maps to cuLinkAddData_v2; the same arguments and
   behaviour.  */
CUresult
cuLinkAddData (CUlinkState state, CUjitInputType type, void *data,
	       size_t size, const char *name, unsigned int nopts,
	       CUjit_option *opts, void **vals)
{
  (void) nopts;
  (void) opts;
  (void) vals;
  CUresult e = fk_enter (FK_cuLinkAddData);
  if (e != CUDA_SUCCESS)
    return fk_link_failed (state, e,
			   "fake ptxas: injected failure of cuLinkAddData");
  NEED_CTX (cuLinkAddData);
  RETURN (fk_link_add (FK_cuLinkAddData, state, type, data, size, name));
}

CUresult
cuLinkComplete (CUlinkState state, void **cubin, size_t *size)
{
  CUresult e = fk_enter (FK_cuLinkComplete);
  if (e != CUDA_SUCCESS)
    return fk_link_failed (state, e,
			   "fake ptxas: injected failure of cuLinkComplete");
  NEED_CTX (cuLinkComplete);
  struct fk_link *l = fk_link_find (state);
  if (l == NULL || cubin == NULL || size == NULL)
    {
      fk_bad (FK_cuLinkComplete, "%s", l == NULL ? "not a live link state"
	      : "NULL result pointer");
      RETURN (l == NULL ? CUDA_ERROR_INVALID_HANDLE
	      : CUDA_ERROR_INVALID_VALUE);
    }
  if (l->ninputs == 0)
    {
      fk_put_log (l->error_log, l->error_log_size, l->error_log_size_out,
		  "fake nvlink: no input to link");
      fk_bad (FK_cuLinkComplete, "no inputs");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  size_t total;
  free (l->linked);
  l->linked = fk_linked_image (l->inputs, l->ninputs, &total);
  if (l->linked == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  char info[128];
  snprintf (info, sizeof info, "fake nvlink info: linked %d input%s for"
	    " sm_%d", l->ninputs, l->ninputs == 1 ? "" : "s", fk_sm);
  fk_put_log (l->info_log, l->info_log_size, l->info_log_size_out, info);
  *cubin = l->linked;
  *size = total;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuLinkDestroy (CUlinkState state)
{
  ENTER (cuLinkDestroy);
  NEED_INIT (cuLinkDestroy);
  if (fk_link_find (state) == NULL)
    {
      fk_bad (FK_cuLinkDestroy, "%p is not a live link state", (void *) state);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  fk_link_free (state);
  RETURN (CUDA_SUCCESS);
}
