/*
 * simmem.c - real, touched memory for the simulated engine. See simmem.h.
 *
 * Uses mmap/munmap directly so that giving memory back really lowers the
 * resident set (malloc may keep freed memory). Must never print.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "simmem.h"
#include "util.h"

void
simmem_init(struct simmem *m)
{
	memset(m, 0, sizeof(*m));
}

static void *
map_touched(size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	unsigned char *p;
	size_t i;

#ifdef MAP_POPULATE
	flags |= MAP_POPULATE;		/* one call instead of a fault a page */
#endif
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < len; i += (size_t)(page > 0 ? page : 4096))
		p[i] = (unsigned char)(i | 1);
	return p;
}

struct werr *
simmem_weights(struct simmem *m, size_t bytes)
{
	if (bytes == 0)
		return NULL;
	m->weights = map_touched(bytes);
	if (m->weights == NULL)
		return werr_errno("mmap weights", NULL);
	m->weights_len = bytes;
	return NULL;
}

int
simmem_set_kv(struct simmem *m, uint64_t bytes)
{
	size_t want = (size_t)((bytes + SIMMEM_CHUNK - 1) / SIMMEM_CHUNK);
	void *p;

	while (m->nchunks > want) {
		m->nchunks--;
		munmap(m->chunks[m->nchunks], SIMMEM_CHUNK);
	}
	while (m->nchunks < want) {
		if (m->nchunks == m->cap) {
			m->cap = m->cap != 0 ? m->cap * 2 : 64;
			m->chunks = xrealloc(m->chunks,
			    m->cap * sizeof(*m->chunks));
		}
		if ((p = map_touched(SIMMEM_CHUNK)) == NULL)
			return -1;
		m->chunks[m->nchunks++] = p;
	}
	return 0;
}

uint64_t
simmem_kv_held(const struct simmem *m)
{
	return (uint64_t)m->nchunks * SIMMEM_CHUNK;
}

void
simmem_free(struct simmem *m)
{
	simmem_set_kv(m, 0);
	free(m->chunks);
	if (m->weights != NULL)
		munmap(m->weights, m->weights_len);
	memset(m, 0, sizeof(*m));
}
