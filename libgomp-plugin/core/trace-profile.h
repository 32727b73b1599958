/* OFFLOADKIT_PROFILE's file, for trace.c.  */

#ifndef OFFLOADKIT_TRACE_PROFILE_H
#define OFFLOADKIT_TRACE_PROFILE_H

#include <stdbool.h>

#include "text-buf.h"

/* Profile to PATH (copied), opened at the first event.  False after a
   message.  */
bool ok_profile_start (const char *path);
/* Whether events are still to be written (the profile was asked for and
   has not failed or been completed).  */
bool ok_profile_on (void);
/* The process the profile is of (its events' "pid").  */
int ok_profile_pid (void);
/* Append EVENT, of device ORD of BACKEND (whose track is named first).  */
void ok_profile_event (int ord, const char *backend,
		       const struct ok_tbuf *event);
/* Complete the profile: later events are dropped.  */
void ok_profile_finish (void);

#endif
