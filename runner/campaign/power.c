/*
 * power.c - the power assertion of power.h. On macOS IOKit and
 * CoreFoundation are reached with dlopen/dlsym, so warden links no
 * framework and the Linux build needs nothing; elsewhere the functions do
 * nothing. Never prints, never fails a campaign.
 */
#include "config.h"

#include <stdlib.h>

#include "power.h"
#include "util.h"

#ifdef __APPLE__

#include <dlfcn.h>
#include <stdint.h>

struct power_hold {
	uint32_t id;
	int (*release)(uint32_t);
};

/*
 * The interfaces, as Apple declares them (neither framework's headers are
 * in the SDK's usr/include, so the types are spelled out here):
 *
 *   IOKit/pwr_mgt/IOPMLib.h: IOReturn IOPMAssertionCreateWithName(
 *       CFStringRef AssertionType, IOPMAssertionLevel AssertionLevel,
 *       CFStringRef AssertionName, IOPMAssertionID *AssertionID);
 *     IOReturn IOPMAssertionRelease(IOPMAssertionID AssertionID);
 *     IOPMAssertionLevel and IOPMAssertionID are uint32_t, IOReturn an
 *     int (kern_return_t), kIOPMAssertionLevelOn 255, and
 *     kIOPMAssertionTypePreventUserIdleSystemSleep the string
 *     "PreventUserIdleSystemSleep": the system does not idle-sleep while
 *     the assertion is held (the display may), which is what a campaign
 *     of hours needs on an unattended Mac; `pmset -g assertions` lists it
 *     under its name
 *   CoreFoundation/CFString.h: CFStringRef CFStringCreateWithCString(
 *       CFAllocatorRef alloc, const char *cStr, CFStringEncoding encoding);
 *     kCFStringEncodingUTF8 0x08000100; CFBase.h: void CFRelease(CFTypeRef)
 */
#define CF_STRING_ENCODING_UTF8 0x08000100U
#define IOPM_ASSERTION_LEVEL_ON 255U

struct power_hold *
power_hold_begin(const char *reason)
{
	typedef const void *(*cfstr_fn)(const void *, const char *, uint32_t);
	typedef void (*cfrelease_fn)(const void *);
	typedef int (*create_fn)(const void *, uint32_t, const void *,
	    uint32_t *);
	void *iokit, *cf;
	cfstr_fn cfstr;
	cfrelease_fn cfrelease;
	create_fn create;
	const void *type, *name;
	struct power_hold *h;
	int rc;

	iokit = dlopen("/System/Library/Frameworks/IOKit.framework/IOKit",
	    RTLD_LAZY);
	cf = dlopen("/System/Library/Frameworks/CoreFoundation.framework/"
	    "CoreFoundation", RTLD_LAZY);
	if (iokit == NULL || cf == NULL)
		return NULL;
	cfstr = (cfstr_fn)dlsym(cf, "CFStringCreateWithCString");
	cfrelease = (cfrelease_fn)dlsym(cf, "CFRelease");
	create = (create_fn)dlsym(iokit, "IOPMAssertionCreateWithName");
	h = xcalloc(1, sizeof(*h));
	h->release = (int (*)(uint32_t))dlsym(iokit, "IOPMAssertionRelease");
	if (cfstr == NULL || cfrelease == NULL || create == NULL ||
	    h->release == NULL) {
		free(h);
		return NULL;
	}
	type = cfstr(NULL, "PreventUserIdleSystemSleep", CF_STRING_ENCODING_UTF8);
	name = cfstr(NULL, reason, CF_STRING_ENCODING_UTF8);
	rc = (type && name) ? create(type, IOPM_ASSERTION_LEVEL_ON, name,
	    &h->id) : -1;
	if (type)
		cfrelease(type);
	if (name)
		cfrelease(name);
	if (rc != 0) {
		free(h);
		return NULL;
	}
	return h;
}

void
power_hold_end(struct power_hold *hold)
{
	if (hold == NULL)
		return;
	hold->release(hold->id);
	free(hold);
}

#else

struct power_hold *
power_hold_begin(const char *reason)
{
	return NULL;
}

void
power_hold_end(struct power_hold *hold)
{
}

#endif
