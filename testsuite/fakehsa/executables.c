/* The fake HSA runtime: code object readers (and deserialized code
   objects) and executables, which load them for an agent and are frozen
   before use.  See fake-hsa.h.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fake-hsa.h"

struct fh_exec *
fh_exec_find (hsa_executable_t e)
{
  return fake_handle_get (&fh_handles, FH_H_EXEC,
			  (const void *) (uintptr_t) e.handle);
}

/* A reader, or (KIND FH_H_CODE_OBJECT) a deserialized code object.  */
static struct fh_reader *
fh_reader_find (uint64_t h, enum fh_handle_kind kind)
{
  return fake_handle_get (&fh_handles, kind, (const void *) (uintptr_t) h);
}

/* A new, empty executable in *EXEC.  */
static hsa_status_t
fh_exec_new (hsa_executable_t *exec)
{
  struct fh_exec *e = fake_handle_new (&fh_handles, FH_H_EXEC, sizeof *e);
  if (e == NULL)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  exec->handle = (uintptr_t) e;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_executable_create (int profile, int state, const char *options,
		       hsa_executable_t *exec)
{
  ENTER (hsa_executable_create);
  NEED_INIT (hsa_executable_create);
  (void) options;
  if (exec == NULL || profile < 0 || profile > 1 || state != 0)
    BAD (hsa_executable_create, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad profile %d, state %d or result", profile, state);
  RETURN (fh_exec_new (exec));
}

hsa_status_t
hsa_executable_create_alt (int profile, int rounding, const char *options,
			   hsa_executable_t *exec)
{
  ENTER (hsa_executable_create_alt);
  NEED_INIT (hsa_executable_create_alt);
  (void) options;
  if (exec == NULL || profile < 0 || profile > 1 || rounding < 0
      || rounding > 2)
    BAD (hsa_executable_create_alt, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad profile %d, rounding mode %d or result", profile, rounding);
  RETURN (fh_exec_new (exec));
}

/* A reader of a copy of BYTES, or (KIND FH_H_CODE_OBJECT) a
   deserialized code object, in *HANDLE.  */
static hsa_status_t
fh_reader_new (const void *bytes, size_t size, enum fh_handle_kind kind,
	       uint64_t *handle)
{
  unsigned char *copy = malloc (size);
  struct fh_reader *r = (copy != NULL
			 ? fake_handle_new (&fh_handles, kind, sizeof *r)
			 : NULL);
  if (r == NULL)
    {
      free (copy);
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
  memcpy (copy, bytes, size);
  r->bytes = copy;
  r->size = size;
  *handle = (uintptr_t) r;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t
fh_reader_destroy (int sym, uint64_t h, enum fh_handle_kind kind)
{
  struct fh_reader *r = fh_reader_find (h, kind);
  if (r == NULL)
    {
      fh_bad (sym, "unknown code object %#llx", (unsigned long long) h);
      return kind == FH_H_CODE_OBJECT ? HSA_STATUS_ERROR_INVALID_CODE_OBJECT
	     : HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    }
  free (r->bytes);
  fake_handle_free (&fh_handles, kind, r);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_code_object_reader_create_from_memory (const void *code, size_t size,
					   hsa_code_object_reader_t *reader)
{
  ENTER (hsa_code_object_reader_create_from_memory);
  NEED_INIT (hsa_code_object_reader_create_from_memory);
  if (code == NULL || size == 0 || reader == NULL)
    BAD (hsa_code_object_reader_create_from_memory,
	 HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL code, size 0 or NULL result");
  RETURN (fh_reader_new (code, size, FH_H_READER, &reader->handle));
}

hsa_status_t
hsa_code_object_reader_destroy (hsa_code_object_reader_t reader)
{
  ENTER (hsa_code_object_reader_destroy);
  NEED_INIT (hsa_code_object_reader_destroy);
  RETURN (fh_reader_destroy (FH_hsa_code_object_reader_destroy,
			     reader.handle, FH_H_READER));
}

hsa_status_t
hsa_code_object_deserialize (void *code, size_t size, const char *options,
			     hsa_code_object_t *object)
{
  ENTER (hsa_code_object_deserialize);
  NEED_INIT (hsa_code_object_deserialize);
  (void) options;
  if (code == NULL || size == 0 || object == NULL)
    BAD (hsa_code_object_deserialize, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL code, size 0 or NULL result");
  RETURN (fh_reader_new (code, size, FH_H_CODE_OBJECT, &object->handle));
}

hsa_status_t
hsa_code_object_destroy (hsa_code_object_t object)
{
  ENTER (hsa_code_object_destroy);
  NEED_INIT (hsa_code_object_destroy);
  RETURN (fh_reader_destroy (FH_hsa_code_object_destroy, object.handle,
			     FH_H_CODE_OBJECT));
}

void
fh_symbol_free (struct fh_symbol *s)
{
  free (s->name);
  free (s);
}

static hsa_status_t
fh_load_common (int sym, hsa_executable_t exec, hsa_agent_t agent,
		struct fh_reader *r)
{
  struct fh_exec *e = fh_exec_find (exec);
  struct fh_agent *a = fh_agent_find (agent);
  if (e == NULL)
    {
      fh_bad (sym, "unknown executable");
      return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    }
  if (a == NULL || !a->gpu)
    {
      fh_bad (sym, "not a GPU agent");
      return HSA_STATUS_ERROR_INVALID_AGENT;
    }
  if (e->frozen)
    {
      fh_bad (sym, "executable is frozen");
      return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    }
  char why[200];
  hsa_status_t st = fh_load (e, a, r->bytes, r->size, why, sizeof why);
  if (st == HSA_STATUS_SUCCESS)
    fh_log ("load agent %d %zu bytes, %d symbols", fh_agent_index (a),
	    r->size, e->nsyms);
  else
    fh_log ("load agent %d refused 0x%x: %s", fh_agent_index (a), st, why);
  return st;
}

hsa_status_t
hsa_executable_load_agent_code_object (hsa_executable_t exec,
				       hsa_agent_t agent,
				       hsa_code_object_reader_t reader,
				       const char *options,
				       hsa_loaded_code_object_t *loaded)
{
  ENTER (hsa_executable_load_agent_code_object);
  NEED_INIT (hsa_executable_load_agent_code_object);
  (void) options;
  struct fh_reader *r = fh_reader_find (reader.handle, FH_H_READER);
  if (r == NULL)
    BAD (hsa_executable_load_agent_code_object,
	 HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER, "unknown reader");
  hsa_status_t st = fh_load_common (FH_hsa_executable_load_agent_code_object,
				    exec, agent, r);
  if (st == HSA_STATUS_SUCCESS && loaded != NULL)
    loaded->handle = (uintptr_t) r;
  RETURN (st);
}

hsa_status_t
hsa_executable_load_code_object (hsa_executable_t exec, hsa_agent_t agent,
				 hsa_code_object_t object,
				 const char *options)
{
  ENTER (hsa_executable_load_code_object);
  NEED_INIT (hsa_executable_load_code_object);
  (void) options;
  struct fh_reader *r = fh_reader_find (object.handle, FH_H_CODE_OBJECT);
  if (r == NULL)
    BAD (hsa_executable_load_code_object,
	 HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "unknown code object");
  RETURN (fh_load_common (FH_hsa_executable_load_code_object, exec, agent,
			  r));
}

hsa_status_t
hsa_executable_global_variable_define (hsa_executable_t exec,
				       const char *name, void *address)
{
  ENTER (hsa_executable_global_variable_define);
  NEED_INIT (hsa_executable_global_variable_define);
  (void) address;
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL || name == NULL)
    BAD (hsa_executable_global_variable_define,
	 HSA_STATUS_ERROR_INVALID_EXECUTABLE, "unknown executable or NULL name");
  RETURN (e->frozen ? HSA_STATUS_ERROR_FROZEN_EXECUTABLE : HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_executable_freeze (hsa_executable_t exec, const char *options)
{
  ENTER (hsa_executable_freeze);
  NEED_INIT (hsa_executable_freeze);
  (void) options;
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL)
    BAD (hsa_executable_freeze, HSA_STATUS_ERROR_INVALID_EXECUTABLE,
	 "unknown executable");
  if (e->frozen)
    BAD (hsa_executable_freeze, HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
	 "frozen twice");
  e->frozen = true;
  RETURN (HSA_STATUS_SUCCESS);
}

static void
fh_exec_free (struct fh_exec *e)
{
  for (int i = 0; i < e->nsyms; i++)
    fh_symbol_free (e->syms[i]);
  for (int i = 0; i < e->ncode; i++)
    fh_block_free (e->code[i], FH_BLOCK_CODE);
  free (e->syms);
  free (e->code);
  fake_handle_free (&fh_handles, FH_H_EXEC, e);
}

hsa_status_t
hsa_executable_destroy (hsa_executable_t exec)
{
  ENTER (hsa_executable_destroy);
  NEED_INIT (hsa_executable_destroy);
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL)
    BAD (hsa_executable_destroy, HSA_STATUS_ERROR_INVALID_EXECUTABLE,
	 "unknown executable");
  fh_exec_free (e);
  fh_log ("executable destroyed");
  RETURN (HSA_STATUS_SUCCESS);
}
