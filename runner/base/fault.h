/*
 * fault.h - named crash points, for tests only.
 *
 * WARDEN_FAULT=NAME[:N] makes the Nth pass (default the first) through
 * fault_point("NAME") kill the process with SIGKILL, as a power cut or
 * kill -9 would at that moment. WARDEN_FAULT_TRACE=FILE appends the name
 * of every point passed, one per line, so a test can enumerate the points
 * an operation goes through and then kill it at each. Unset, a point
 * costs one branch. Adding a point is one line: fault_point("area.what").
 * Never used for anything but making crashes reproducible.
 */
#ifndef WARDEN_FAULT_H
#define WARDEN_FAULT_H

void fault_point(const char *name);

#endif
