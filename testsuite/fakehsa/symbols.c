/* The fake HSA runtime: the symbols of executables, found by name (not
   the local ones: ROCr does not load them), iterated, and described.  See
   fake-hsa.h.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fake-hsa.h"

static struct fh_symbol *
fh_symbol_find (hsa_executable_symbol_t s)
{
  struct fh_exec *e;
  FAKE_HANDLES_EACH (&fh_handles, FH_H_EXEC, e)
    for (int i = 0; i < e->nsyms; i++)
      if ((uintptr_t) e->syms[i] == s.handle)
	return e->syms[i];
  return NULL;
}

static hsa_status_t
fh_get_symbol (int sym, hsa_executable_t exec, const char *name,
	       const hsa_agent_t *agent, hsa_executable_symbol_t *out)
{
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL)
    {
      fh_bad (sym, "unknown executable");
      return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    }
  if (name == NULL || out == NULL)
    {
      fh_bad (sym, "NULL name or result");
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  if (!e->frozen)
    fh_log ("warning %s: executable not frozen", fh_sym_names[sym]);
  struct fh_agent *a = agent != NULL ? fh_agent_find (*agent) : NULL;
  if (agent != NULL && a == NULL)
    {
      fh_bad (sym, "unknown agent");
      return HSA_STATUS_ERROR_INVALID_AGENT;
    }
  for (int i = 0; i < e->nsyms; i++)
    if (!e->syms[i]->local && strcmp (e->syms[i]->name, name) == 0
	&& (a == NULL || e->syms[i]->agent == a))
      {
	out->handle = (uintptr_t) e->syms[i];
	return HSA_STATUS_SUCCESS;
      }
  fh_log ("no symbol %s", name);
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}

hsa_status_t
hsa_executable_get_symbol_by_name (hsa_executable_t exec, const char *name,
				   const hsa_agent_t *agent,
				   hsa_executable_symbol_t *symbol)
{
  ENTER (hsa_executable_get_symbol_by_name);
  NEED_INIT (hsa_executable_get_symbol_by_name);
  RETURN (fh_get_symbol (FH_hsa_executable_get_symbol_by_name, exec, name,
			 agent, symbol));
}

hsa_status_t
hsa_executable_get_symbol (hsa_executable_t exec, const char *module,
			   const char *name, hsa_agent_t agent,
			   int32_t call_convention,
			   hsa_executable_symbol_t *symbol)
{
  ENTER (hsa_executable_get_symbol);
  NEED_INIT (hsa_executable_get_symbol);
  (void) module;
  (void) call_convention;
  RETURN (fh_get_symbol (FH_hsa_executable_get_symbol, exec, name, &agent,
			 symbol));
}

hsa_status_t
hsa_executable_iterate_symbols (hsa_executable_t exec,
				hsa_status_t (*cb) (hsa_executable_t,
						    hsa_executable_symbol_t,
						    void *),
				void *data)
{
  ENTER (hsa_executable_iterate_symbols);
  NEED_INIT (hsa_executable_iterate_symbols);
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL || cb == NULL)
    BAD (hsa_executable_iterate_symbols, HSA_STATUS_ERROR_INVALID_EXECUTABLE,
	 "unknown executable or NULL callback");
  struct fh_symbol **copy = malloc ((e->nsyms + 1) * sizeof *copy);
  if (copy == NULL)
    RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  int n = 0;
  for (int i = 0; i < e->nsyms; i++)
    if (!e->syms[i]->local)
      copy[n++] = e->syms[i];
  pthread_mutex_unlock (&fh_lock);
  hsa_status_t r = HSA_STATUS_SUCCESS;
  for (int i = 0; i < n && r == HSA_STATUS_SUCCESS; i++)
    r = cb (exec, (hsa_executable_symbol_t) { (uintptr_t) copy[i] }, data);
  free (copy);
  return r;
}

hsa_status_t
hsa_executable_symbol_get_info (hsa_executable_symbol_t symbol,
				int attribute, void *value)
{
  ENTER (hsa_executable_symbol_get_info);
  NEED_INIT (hsa_executable_symbol_get_info);
  struct fh_symbol *s = fh_symbol_find (symbol);
  if (s == NULL)
    BAD (hsa_executable_symbol_get_info,
	 HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL, "unknown symbol %#llx",
	 (unsigned long long) symbol.handle);
  if (value == NULL)
    BAD (hsa_executable_symbol_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL value");
  bool kernel_attr = false, var_attr = false;
  switch (attribute)
    {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      *(uint32_t *) value = s->kernel ? HSA_SYMBOL_KIND_KERNEL
				      : HSA_SYMBOL_KIND_VARIABLE;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
      *(uint32_t *) value = (uint32_t) strlen (s->name);
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
      /* Not NUL-terminated, as in ROCm.  */
      memcpy (value, s->name, strlen (s->name));
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
      ((hsa_agent_t *) value)->handle = (uintptr_t) s->agent;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
      var_attr = true;
      *(uint64_t *) value = s->addr;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
      var_attr = true;
      *(uint32_t *) value = (uint32_t) s->size;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      kernel_attr = true;
      *(uint64_t *) value = s->addr;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      kernel_attr = true;
      *(uint32_t *) value = s->kernarg;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      kernel_attr = true;
      *(uint32_t *) value = 16;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
      kernel_attr = true;
      *(uint32_t *) value = s->group;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
      kernel_attr = true;
      *(uint32_t *) value = s->private_;
      break;
    default:
      BAD (hsa_executable_symbol_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	   "attribute %d not implemented", attribute);
    }
  /* The real runtime answers these with garbage or an error for the
     other kind of symbol: the plugin should not ask.  */
  if ((kernel_attr && !s->kernel) || (var_attr && s->kernel))
    BAD (hsa_executable_symbol_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "attribute %d asked of %s %s", attribute,
	 s->kernel ? "kernel" : "variable", s->name);
  RETURN (HSA_STATUS_SUCCESS);
}
