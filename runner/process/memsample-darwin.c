/*
 * memsample-darwin.c - the macOS half of memsample.h: host_statistics64
 * for the system (app + wired + compressed pages, as Activity Monitor's
 * "Memory Used"), proc_pid_rusage phys_footprint summed over the engine's
 * process group and the children of its leader, and Metal's
 * recommendedMaxWorkingSetSize reached through the Objective-C runtime
 * with dlopen, so warden links no framework. Compiled only on macOS.
 * Never prints.
 */
#include "config.h"

#ifdef __APPLE__

#include <sys/types.h>
#include <sys/sysctl.h>

#include <dlfcn.h>
#include <libproc.h>
#include <mach/mach.h>
#include <stdlib.h>
#include <string.h>

#include "memsample.h"
#include "util.h"

struct werr *
memsample_system(uint64_t *used, uint64_t *total)
{
	mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
	vm_statistics64_data_t vm;
	vm_size_t pagesize;
	uint64_t memsize = 0, app;
	size_t len = sizeof(memsize);

	if (sysctlbyname("hw.memsize", &memsize, &len, NULL, 0) == -1)
		return werr_errno("sysctl", "hw.memsize");
	if (host_page_size(mach_host_self(), &pagesize) != KERN_SUCCESS)
		return werr_new(WEXIT_ENV, "host_page_size failed");
	if (host_statistics64(mach_host_self(), HOST_VM_INFO64,
	    (host_info64_t)&vm, &count) != KERN_SUCCESS)
		return werr_new(WEXIT_ENV, "host_statistics64 failed");
	app = vm.internal_page_count > vm.purgeable_count ?
	    vm.internal_page_count - vm.purgeable_count : 0;
	*used = (app + vm.wire_count + vm.compressor_page_count) *
	    (uint64_t)pagesize;
	*total = memsize;
	return NULL;
}

static void
add_pid(pid_t pid, uint64_t *bytes, unsigned *n)
{
	struct rusage_info_v2 ri;

	if (proc_pid_rusage(pid, RUSAGE_INFO_V2, (rusage_info_t *)&ri) != 0)
		return;
	*bytes += ri.ri_phys_footprint;
	(*n)++;
}

struct werr *
memsample_tree(pid_t root, uint64_t *bytes, unsigned *nprocs)
{
	pid_t *pids;
	int cap, got, i, j, dup;
	pid_t kids[1024];
	int nkids;

	*bytes = 0;
	*nprocs = 0;
	if (root <= 0)
		return NULL;
	cap = proc_listpids(PROC_PGRP_ONLY, (uint32_t)root, NULL, 0);
	if (cap < 0)
		return werr_errno("proc_listpids", NULL);
	cap = cap / (int)sizeof(pid_t) + 64;
	pids = xcalloc((size_t)cap, sizeof(pid_t));
	got = proc_listpids(PROC_PGRP_ONLY, (uint32_t)root, pids,
	    cap * (int)sizeof(pid_t)) / (int)sizeof(pid_t);
	for (i = 0; i < got; i++)
		if (pids[i] > 0)
			add_pid(pids[i], bytes, nprocs);
	/* Children of the leader that left its group (this one counts pids,
	 * where proc_listpids counts bytes). */
	nkids = proc_listchildpids(root, kids, (int)sizeof(kids));
	for (i = 0; i < nkids; i++) {
		for (dup = 0, j = 0; j < got; j++)
			if (pids[j] == kids[i])
				dup = 1;
		if (!dup && kids[i] > 0)
			add_pid(kids[i], bytes, nprocs);
	}
	free(pids);
	return NULL;
}

struct werr *
memsample_procs_logging_under(const char *dir, pid_t **pids, size_t *n)
{
	*pids = NULL;
	*n = 0;
	return NULL;
}

int
memsample_tree_listens(pid_t root, int port)
{
	return -1;
}

uint64_t
memsample_gpu_hint(void)
{
	typedef void *(*create_fn)(void);
	typedef void *(*sel_fn)(const char *);
	typedef uint64_t (*send_u64_fn)(void *, void *);
	void *metal, *objc, *device, *sel;
	create_fn create;
	sel_fn sel_register;
	send_u64_fn send;
	uint64_t hint = 0;

	metal = dlopen("/System/Library/Frameworks/Metal.framework/Metal",
	    RTLD_LAZY);
	objc = dlopen("/usr/lib/libobjc.A.dylib", RTLD_LAZY);
	if (metal == NULL || objc == NULL)
		goto out;
	create = (create_fn)dlsym(metal, "MTLCreateSystemDefaultDevice");
	sel_register = (sel_fn)dlsym(objc, "sel_registerName");
	send = (send_u64_fn)dlsym(objc, "objc_msgSend");
	if (create == NULL || sel_register == NULL || send == NULL)
		goto out;
	if ((device = create()) == NULL)
		goto out;
	sel = sel_register("recommendedMaxWorkingSetSize");
	hint = send(device, sel);
out:
	/* The frameworks stay loaded: Metal does not support unloading. */
	return hint;
}

#else
typedef int memsample_darwin_unused;
#endif
