/*
 * power.h - keep the machine awake while a campaign runs (what
 * `caffeinate -i` does): on macOS an IOKit power assertion
 * (PreventUserIdleSystemSleep); elsewhere nothing. Failing to take the
 * assertion is never fatal: a campaign runs without it. Never prints.
 */
#ifndef WARDEN_POWER_H
#define WARDEN_POWER_H

struct power_hold;

/* Take the assertion, naming why; NULL when the platform has none. */
struct power_hold *power_hold_begin(const char *reason);
/* Release it; NULL is fine. */
void power_hold_end(struct power_hold *hold);

#endif
