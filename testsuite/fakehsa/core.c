/* The fake HSA runtime: its state, configuration, the entry of every
   call, status strings, initialisation, and the library's start and end.
   See fake-hsa.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-hsa.h"

FAKE_DEFINE_CORE (fh_sym_names, FH_NSYMS, FH_SYMS, fh_lock, fh_cond);
static bool fh_configured;
bool fh_initialised_once;
int fh_init_refs;
static long fh_calls_total[FH_NSYMS], fh_calls_since_spec[FH_NSYMS];
static int fh_status_by_name (const char *name);
static void fh_configure (void);
struct fake_state fh_fs = {
  .tag = "fakehsa", .fail_var = "FAKEHSA_FAIL",
  .sym_names = fh_sym_names, .nsyms = FH_NSYMS,
  .calls_total = fh_calls_total, .calls_since_spec = fh_calls_since_spec,
  .max_fails = 16, .item_max = 160, .err_by_name = fh_status_by_name,
  .log_fd = -1, .lock = &fh_lock, .configure = fh_configure,
};
struct fake_blocks fh_blocks;
struct fake_handles fh_handles;

/* ------------------------------------------------------------------ */
/* Statuses, configuration, the entry of every call.  */

static const struct { int status; const char *name; const char *text; }
fh_statuses[] = {
  { HSA_STATUS_SUCCESS, "HSA_STATUS_SUCCESS", "success" },
  { HSA_STATUS_INFO_BREAK, "HSA_STATUS_INFO_BREAK", "iteration stopped" },
  { HSA_STATUS_ERROR, "HSA_STATUS_ERROR", "generic error" },
  { HSA_STATUS_ERROR_INVALID_ARGUMENT, "HSA_STATUS_ERROR_INVALID_ARGUMENT",
    "invalid argument" },
  { HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
    "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION", "invalid queue creation" },
  { HSA_STATUS_ERROR_INVALID_ALLOCATION,
    "HSA_STATUS_ERROR_INVALID_ALLOCATION", "invalid allocation" },
  { HSA_STATUS_ERROR_INVALID_AGENT, "HSA_STATUS_ERROR_INVALID_AGENT",
    "invalid agent" },
  { HSA_STATUS_ERROR_INVALID_REGION, "HSA_STATUS_ERROR_INVALID_REGION",
    "invalid region" },
  { HSA_STATUS_ERROR_INVALID_SIGNAL, "HSA_STATUS_ERROR_INVALID_SIGNAL",
    "invalid signal" },
  { HSA_STATUS_ERROR_INVALID_QUEUE, "HSA_STATUS_ERROR_INVALID_QUEUE",
    "invalid queue" },
  { HSA_STATUS_ERROR_OUT_OF_RESOURCES, "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
    "out of resources" },
  { HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
    "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT", "invalid packet format" },
  { HSA_STATUS_ERROR_RESOURCE_FREE, "HSA_STATUS_ERROR_RESOURCE_FREE",
    "resource free" },
  { HSA_STATUS_ERROR_NOT_INITIALIZED, "HSA_STATUS_ERROR_NOT_INITIALIZED",
    "not initialized" },
  { HSA_STATUS_ERROR_INVALID_ISA, "HSA_STATUS_ERROR_INVALID_ISA",
    "invalid instruction set architecture" },
  { HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
    "HSA_STATUS_ERROR_INVALID_CODE_OBJECT", "invalid code object" },
  { HSA_STATUS_ERROR_INVALID_EXECUTABLE,
    "HSA_STATUS_ERROR_INVALID_EXECUTABLE", "invalid executable" },
  { HSA_STATUS_ERROR_FROZEN_EXECUTABLE, "HSA_STATUS_ERROR_FROZEN_EXECUTABLE",
    "executable is frozen" },
  { HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
    "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME", "no such symbol" },
  { HSA_STATUS_ERROR_VARIABLE_UNDEFINED,
    "HSA_STATUS_ERROR_VARIABLE_UNDEFINED", "variable undefined" },
  { HSA_STATUS_ERROR_EXCEPTION, "HSA_STATUS_ERROR_EXCEPTION",
    "kernel exception" },
  { HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
    "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL", "invalid symbol" },
  { HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
    "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
    "invalid code object reader" },
  { HSA_STATUS_ERROR_FATAL, "HSA_STATUS_ERROR_FATAL", "fatal error" },
};

/* The status named NAME (for FAKEHSA_FAIL), or -1.  */
static int
fh_status_by_name (const char *name)
{
  int st = -1;
  for (size_t i = 0; i < sizeof fh_statuses / sizeof *fh_statuses; i++)
    if (strcmp (fh_statuses[i].name, name) == 0)
      st = fh_statuses[i].status;
  return st;
}

static void
fh_configure (void)
{
  if (fh_configured)
    return;
  fh_configured = true;
  const char *list = getenv ("FAKEHSA_AGENTS");
  if (list == NULL)
    list = "gfx906";
  if (strcmp (list, "none") == 0)
    list = "";
  fh_agents_configure (list);
  fake_open_log (&fh_fs, "FAKEHSA_LOG");
  fake_parse_fail (&fh_fs, getenv ("FAKEHSA_FAIL"));
}

int
fh_default_status (int sym)
{
  switch (sym)
    {
    case FH_hsa_init:
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    case FH_hsa_memory_allocate:
    case FH_hsa_amd_memory_pool_allocate:
    case FH_hsa_signal_create:
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    case FH_hsa_queue_create:
      return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
    case FH_hsa_code_object_reader_create_from_memory:
    case FH_hsa_executable_load_agent_code_object:
    case FH_hsa_code_object_deserialize:
    case FH_hsa_executable_load_code_object:
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    case FH_hsa_executable_get_symbol_by_name:
    case FH_hsa_executable_get_symbol:
      return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
    case FH_hsa_executable_freeze:
      return HSA_STATUS_ERROR_VARIABLE_UNDEFINED;
    case FH_kernel_dispatch:
      return HSA_STATUS_ERROR_EXCEPTION;
    default:
      return HSA_STATUS_ERROR;
    }
}

/* Entry of every exported function; see fake-hsa.h.  */
hsa_status_t
fh_enter (int sym)
{
  pthread_mutex_lock (&fh_lock);
  fh_configure ();
  long n;
  const struct fake_fail *f = fake_count_call (&fh_fs, sym, &n);
  if (f != NULL)
    {
      int st = f->err >= 0 ? f->err : fh_default_status (sym);
      fh_log ("fail %s call %ld -> 0x%x", fh_sym_names[sym], n, st);
      pthread_mutex_unlock (&fh_lock);
      return st;
    }
  return HSA_STATUS_SUCCESS;
}

void
fh_enter_void (int sym)
{
  pthread_mutex_lock (&fh_lock);
  fh_configure ();
  /* Nothing can be armed for these.  */
  (void) fake_count_call (&fh_fs, sym, NULL);
}

/* ------------------------------------------------------------------ */
/* Initialisation and information.  */

hsa_status_t
hsa_init (void)
{
  ENTER (hsa_init);
  fh_init_refs++;
  fh_initialised_once = true;
  fh_log ("init %d gpu agents", fh_nagents);
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_shut_down (void)
{
  ENTER (hsa_shut_down);
  NEED_INIT (hsa_shut_down);
  if (--fh_init_refs == 0)
    fh_log ("shut down");
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_status_string (hsa_status_t status, const char **str)
{
  ENTER (hsa_status_string);
  if (str == NULL)
    BAD (hsa_status_string, HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL result");
  /* ROCm's strings begin with the status's name.  */
  static char texts[sizeof fh_statuses / sizeof *fh_statuses][128];
  for (size_t i = 0; i < sizeof fh_statuses / sizeof *fh_statuses; i++)
    if (fh_statuses[i].status == status)
      {
	snprintf (texts[i], sizeof texts[i], "%s: %s", fh_statuses[i].name,
		  fh_statuses[i].text);
	*str = texts[i];
	RETURN (HSA_STATUS_SUCCESS);
      }
  RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

hsa_status_t
hsa_system_get_info (int attribute, void *value)
{
  ENTER (hsa_system_get_info);
  NEED_INIT (hsa_system_get_info);
  if (value == NULL)
    BAD (hsa_system_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL value");
  switch (attribute)
    {
    case HSA_SYSTEM_INFO_VERSION_MAJOR:
      *(uint16_t *) value = 1;
      break;
    case HSA_SYSTEM_INFO_VERSION_MINOR:
      *(uint16_t *) value = 1;
      break;
    case HSA_SYSTEM_INFO_TIMESTAMP:
      {
	struct timespec ts;
	clock_gettime (CLOCK_MONOTONIC, &ts);
	*(uint64_t *) value = (uint64_t) ts.tv_sec * 1000000000u
			      + (uint64_t) ts.tv_nsec;
      }
      break;
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
      *(uint64_t *) value = 1000000000u;
      break;
    case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT:
      *(uint64_t *) value = UINT64_MAX;
      break;
    case HSA_SYSTEM_INFO_ENDIANNESS:
    case HSA_SYSTEM_INFO_MACHINE_MODEL:
      *(uint32_t *) value = attribute == HSA_SYSTEM_INFO_MACHINE_MODEL;
      break;
    case HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED:
      *(bool *) value = true;
      break;
    case HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT:
      /* FAKEHSA_SVM_DEFAULT=1: as with XNACK on (amd-memory.c).  */
      *(bool *) value = getenv ("FAKEHSA_SVM_DEFAULT") != NULL
			&& strcmp (getenv ("FAKEHSA_SVM_DEFAULT"), "1") == 0;
      break;
    default:
      RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
  RETURN (HSA_STATUS_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* The library's start and end.  */

static void
fh_atfork_prepare (void)
{
  pthread_mutex_lock (&fh_lock);
}

static void
fh_atfork_release (void)
{
  pthread_mutex_unlock (&fh_lock);
}

__attribute__ ((constructor)) static void
fh_init (void)
{
  pthread_atfork (fh_atfork_prepare, fh_atfork_release, fh_atfork_release);
}

static void
fh_reset_tables (void)
{
  fake_records_free (&fh_dispatches);
  fake_tables_release (&fh_handles, &fh_blocks);
}

/* At unload or exit: if asked, fail when anything created is alive.
   (Kernels do not run, so nothing else needs stopping.)  */
__attribute__ ((destructor)) static void
fh_fini (void)
{
  pthread_mutex_lock (&fh_lock);
  fh_reset_tables ();
  pthread_mutex_unlock (&fh_lock);
  static const char *const kinds[] = { "mem", "code", "executable", "reader",
				       "queue", "signal", "lock" };
  fake_check_leaks ("fakehsa", "FAKEHSA_CHECK_LEAKS", kinds,
		    sizeof kinds / sizeof kinds[0], fakehsa_outstanding);
}
