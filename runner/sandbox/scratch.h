/*
 * scratch.h - the folder of an unreviewed run: the one place a program
 * no maintainer approved may write, that no approved run ever uses, and
 * that warden measures and discards when the run ends.
 *
 * An unreviewed run (a smoke campaign of an agent's change, of a pending
 * review, of a pull request, triage's scratch runs) gets
 * .warden/unreviewed/RUN/: per engine its own HOME (a copy of the live
 * environment's, so nothing it writes there is ever executed by an
 * official run), its {scratch} and its {log_dir}. warden never reopens
 * anything in it by path: the server's log it writes through a
 * descriptor it holds, and what is left is measured without following a
 * link (lstat) and removed. Never prints.
 */
#ifndef WARDEN_SANDBOX_SCRATCH_H
#define WARDEN_SANDBOX_SCRATCH_H

#include <stdint.h>

#include "error.h"

/* Where the folders of unreviewed runs live, under the repository. */
#define SCRATCH_ROOT ".warden/unreviewed"

/* The most bytes any one file written by a program of an unreviewed run
 * may hold (RLIMIT_FSIZE: a write past it fails with EFBIG). */
#define SCRATCH_FILE_MAX ((uint64_t)4 << 30)

/* What a run left behind, measured before it is removed. */
struct scratch_usage {
	uint64_t files;		/* every entry but directories */
	uint64_t dirs;
	uint64_t bytes;		/* apparent sizes of regular files */
	uint64_t disk_bytes;	/* blocks allocated (a sparse file's are
				   few) */
	int cut;		/* more entries than SCRATCH_MEASURE_MAX */
};

#define SCRATCH_MEASURE_MAX 1000000

/*
 * Copy the tree src into dst (which must not exist), as a new folder
 * of its own: directories, regular files (cloned where the file system
 * can: clonefile(2) on macOS, FICLONE or copy_file_range(2) on Linux)
 * and symbolic links as links; anything else is left out. For a trusted
 * tree (the live HOME of an engine) given to an unreviewed run. A src
 * that does not exist gives an empty dst.
 */
struct werr *scratch_copy_tree(const char *src, const char *dst);

/* Measure the tree at dir without following a link. A dir that does
 * not exist is all zeros. */
void scratch_measure(const char *dir, struct scratch_usage *out);

/*
 * Remove the tree at dir, never following a link, whatever modes its
 * folders were left with. A dir that does not exist is not an error.
 */
struct werr *scratch_discard(const char *dir);

#endif
