/* The error contract of the plugins (plugin-core.h): every message goes
   through GOMP_PLUGIN_error with the plugin's name first, and a message
   about a device names it as its label says; GCC's own words where
   programs and libgomp's tests match them (ok_inner_free_error,
   ok_gcc_words_error) are the exceptions.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin-core.h"

/* Report PREFIX followed by FMT formatted with AP, in full however long
   it is.  */
static void
ok_report (const char *prefix, const char *fmt, va_list ap)
{
  char small[1024];
  va_list aq;
  va_copy (aq, ap);
  int n = vsnprintf (small, sizeof small, fmt, ap);
  char *text = small;
  if (n >= (int) sizeof small)
    {
      text = malloc ((size_t) n + 1);
      if (text != NULL)
	vsnprintf (text, (size_t) n + 1, fmt, aq);
      else
	text = small;		/* Cut short rather than nothing.  */
    }
  va_end (aq);
  GOMP_PLUGIN_error ("offloadkit-%s: %s%s", ok_plugin.name, prefix,
		     n < 0 ? fmt : text);
  if (text != small)
    free (text);
}

void
ok_verror (const char *fmt, va_list ap)
{
  ok_report ("", fmt, ap);
}

void
ok_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  ok_report ("", fmt, ap);
  va_end (ap);
}

void
ok_dev_error (const struct ok_device *dev, const char *fmt, ...)
{
  char prefix[sizeof dev->label + 2];
  snprintf (prefix, sizeof prefix, "%s: ", dev->label);
  va_list ap;
  va_start (ap, fmt);
  ok_report (prefix, fmt, ap);
  va_end (ap);
}

void
ok_inner_free_error (const struct ok_device *dev, const void *ptr)
{
  OK_DEBUG ("%s%scannot free %p: it lies inside a device allocation, not"
	    " at its start", dev != NULL ? dev->label : "",
	    dev != NULL ? ": " : "", ptr);
  GOMP_PLUGIN_error ("%s", ok_plugin.gcc_inner_free_words != NULL
		     ? ok_plugin.gcc_inner_free_words
		     : "invalid device address");
}

void
ok_gcc_words_error (const char *detail, const char *fmt, ...)
{
  char words[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (words, sizeof words, fmt, ap);
  va_end (ap);
  GOMP_PLUGIN_error ("%s [offloadkit-%s: %s]", words, ok_plugin.name,
		     detail);
}

const char *
ok_result_text (const struct ok_backend *backend, int code, char *buf,
		size_t len)
{
  const char *name = NULL, *text = NULL;
  if (backend->describe_result != NULL)
    backend->describe_result (code, &name, &text);
  char unknown[64];
  snprintf (unknown, sizeof unknown,
	    backend->result_unknown != NULL ? backend->result_unknown
	    : "error %d", code);
  /* Some drivers' descriptions begin with the name already.  */
  if (name != NULL && text != NULL
      && strncmp (text, name, strlen (name)) == 0)
    snprintf (buf, len, "%s", text);
  else if (text != NULL)
    snprintf (buf, len, "%s (%s)", name != NULL ? name : unknown, text);
  else
    snprintf (buf, len, "%s", name != NULL ? name : unknown);
  return buf;
}

void
ok_dev_call_error (const struct ok_device *dev, const char *what,
		   const char *call, int code)
{
  char text[256];
  ok_dev_error (dev, "%s: %s: %s", what, call,
		ok_result_text (dev->backend, code, text, sizeof text));
}

bool
ok_dev_teardown_ok (const struct ok_device *dev, int code, const char *what,
		    const char *call)
{
  if (code == 0 || ok_dev_broken (dev)
      || (dev->backend->teardown_quiet != NULL
	  && dev->backend->teardown_quiet (code)))
    return true;
  char msg[160];
  snprintf (msg, sizeof msg, "cannot %s", what);
  ok_dev_call_error (dev, msg, call, code);
  return false;
}
