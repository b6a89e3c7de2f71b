/*
 * memsample-darwin.c - the macOS half of memsample.h, each figure from
 * the interface Apple's headers (macOS 14 SDK) declare for it:
 *
 *   system   host_statistics64(HOST_VM_INFO64) <mach/host_info.h>: app
 *            (internal_page_count - purgeable_count) + wired (wire_count)
 *            + compressed (compressor_page_count) pages, the fields of
 *            vm_statistics64 <mach/vm_statistics.h> that Activity
 *            Monitor's "Memory Used" adds up, times host_page_size (16 KiB
 *            on Apple Silicon); installed memory from sysctl hw.memsize
 *   tree     ri_phys_footprint of proc_pid_rusage(RUSAGE_INFO_V2)
 *            <libproc.h>, <sys/resource.h> struct rusage_info_v2: the
 *            footprint the kernel charges a process (Activity Monitor's
 *            "Memory" column, footprint(1)), unified memory the GPU uses
 *            for it included; summed over the group of root and every
 *            descendant of root, found through proctree.h (libproc)
 *   port     who listens, through proctree_port_listeners (libproc's
 *            PROC_PIDLISTFDS and PROC_PIDFDSOCKETINFO)
 *   logs     the path of each process's descriptor 1 through
 *            proc_pidfdinfo(PROC_PIDFDVNODEPATHINFO) <sys/proc_info.h>
 *   GPU      Metal's MTLDevice.recommendedMaxWorkingSetSize (Apple's
 *            Metal documentation: "an approximation of how much memory,
 *            in bytes, this GPU device can allocate without affecting its
 *            runtime performance"), reached through the Objective-C
 *            runtime with dlopen, so warden links no framework
 *
 * Compiled for macOS on Linux by ci/macos-check; run only on a Mac.
 * Never prints.
 */
#include "config.h"

#ifdef __APPLE__

#include <sys/types.h>
#include <sys/sysctl.h>

#include <sys/proc_info.h>

#include <dlfcn.h>
#include <libproc.h>
#include <limits.h>
#include <mach/mach.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memsample.h"
#include "proctree.h"
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

/* The footprint of pid; 0 when it is gone (or a zombie). */
static int
footprint(pid_t pid, uint64_t *bytes)
{
	struct rusage_info_v2 ri;

	if (proc_pid_rusage(pid, RUSAGE_INFO_V2, (rusage_info_t *)&ri) != 0)
		return 0;
	*bytes += ri.ri_phys_footprint;
	return 1;
}

/* The process table with the group of root and every descendant of root
 * marked (never warden itself), as memsample-linux.c marks its tree. */
static struct werr *
tree_of(pid_t root, struct proc_info **v, size_t *n, char **marked)
{
	struct werr *err;
	pid_t self = getpid();
	size_t i;

	if ((err = proctree_list(v, n)) != NULL)
		return err;
	*marked = xcalloc(*n + 1, 1);
	for (i = 0; i < *n; i++)
		(*marked)[i] = (*v)[i].pid != self && ((*v)[i].pid == root ||
		    (*v)[i].pgid == root);
	proctree_mark_descendants(*v, *n, *marked);
	return NULL;
}

struct werr *
memsample_tree(pid_t root, uint64_t *bytes, unsigned *nprocs)
{
	struct proc_info *v = NULL;
	char *marked = NULL;
	struct werr *err;
	size_t n = 0, i;

	*bytes = 0;
	*nprocs = 0;
	if (root <= 0)
		return NULL;
	if ((err = tree_of(root, &v, &n, &marked)) != NULL)
		return err;
	for (i = 0; i < n; i++)
		if (marked[i] && !v[i].zombie && footprint(v[i].pid, bytes))
			(*nprocs)++;
	free(marked);
	free(v);
	return NULL;
}

int
memsample_tree_listens(pid_t root, int port)
{
	struct proc_info *v = NULL;
	pid_t *listeners = NULL;
	char *marked = NULL;
	struct werr *err;
	size_t n = 0, nl = 0, i, j;
	int found = 0;

	if ((err = proctree_port_listeners(&listeners, &nl, port)) != NULL) {
		werr_free(err);
		return -1;
	}
	if (nl == 0)
		return 0;
	if ((err = tree_of(root, &v, &n, &marked)) != NULL) {
		werr_free(err);
		free(listeners);
		return -1;
	}
	for (i = 0; i < n && !found; i++)
		for (j = 0; marked[i] && j < nl && !found; j++)
			found = v[i].pid == listeners[j];
	free(marked);
	free(v);
	free(listeners);
	return found;
}

struct werr *
memsample_procs_logging_under(const char *dir, pid_t **pids, size_t *n)
{
	struct vnode_fdinfowithpath vi;
	char real[PATH_MAX];
	struct proc_info *v = NULL;
	struct werr *err;
	size_t dlen = strlen(dir), nv = 0, i, len;
	uid_t uid = getuid();
	struct proc_bsdinfo bi;

	*pids = NULL;
	*n = 0;
	/* The kernel gives real paths (/private/var, not /var). */
	if (realpath(dir, real) != NULL) {
		dir = real;
		dlen = strlen(dir);
	}
	if ((err = proctree_list(&v, &nv)) != NULL)
		return err;
	for (i = 0; i < nv; i++) {
		/* Only this user's processes: nobody else's is ours. */
		if (proc_pidinfo(v[i].pid, PROC_PIDTBSDINFO, 0, &bi,
		    (int)sizeof(bi)) != (int)sizeof(bi) || bi.pbi_uid != uid)
			continue;
		if (proc_pidfdinfo(v[i].pid, STDOUT_FILENO,
		    PROC_PIDFDVNODEPATHINFO, &vi, (int)sizeof(vi)) !=
		    (int)sizeof(vi))
			continue;
		len = strnlen(vi.pvip.vip_path, sizeof(vi.pvip.vip_path));
		if (len <= dlen || strncmp(vi.pvip.vip_path, dir, dlen) != 0 ||
		    vi.pvip.vip_path[dlen] != '/')
			continue;
		*pids = xrealloc(*pids, (*n + 1) * sizeof(**pids));
		(*pids)[(*n)++] = v[i].pid;
	}
	free(v);
	return NULL;
}

static uint64_t gpu_hint;
static pthread_once_t gpu_hint_once = PTHREAD_ONCE_INIT;

/* Asked once per process: the hint is the device's, fixed while it runs. */
static void
gpu_hint_ask(void)
{
	typedef void *(*create_fn)(void);
	typedef void *(*sel_fn)(const char *);
	typedef uint64_t (*send_u64_fn)(void *, void *);
	void *metal, *objc, *device, *sel;
	create_fn create;
	sel_fn sel_register;
	send_u64_fn send;

	/* "In macOS, in order for the system to provide a default Metal
	 * device object, you need to link to the Core Graphics framework
	 * ... such as command line tools" (MTLCreateSystemDefaultDevice,
	 * Apple's Metal documentation): loaded first, or there is no
	 * device and the hint is always null. */
	(void)dlopen("/System/Library/Frameworks/CoreGraphics.framework/"
	    "CoreGraphics", RTLD_LAZY);
	metal = dlopen("/System/Library/Frameworks/Metal.framework/Metal",
	    RTLD_LAZY);
	objc = dlopen("/usr/lib/libobjc.A.dylib", RTLD_LAZY);
	if (metal == NULL || objc == NULL)
		return;
	create = (create_fn)dlsym(metal, "MTLCreateSystemDefaultDevice");
	sel_register = (sel_fn)dlsym(objc, "sel_registerName");
	/* objc_msgSend called through a pointer of the method's own type
	 * (<objc/message.h>: it must be cast before it is called); the
	 * property is a uint64_t. */
	send = (send_u64_fn)dlsym(objc, "objc_msgSend");
	if (create == NULL || sel_register == NULL || send == NULL)
		return;
	if ((device = create()) == NULL)
		return;
	sel = sel_register("recommendedMaxWorkingSetSize");
	gpu_hint = send(device, sel);
	/* The device and the frameworks stay: Metal does not unload. */
}

uint64_t
memsample_gpu_hint(void)
{
	(void)pthread_once(&gpu_hint_once, gpu_hint_ask);
	return gpu_hint;
}

#else
typedef int memsample_darwin_unused;
#endif
