/*
 * machine-load.c - the machine's load during a sweep. See machine-load.h.
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "machine-load.h"
#include "util.h"

json_t *
machine_load_now(void)
{
	double v[3];

	if (getloadavg(v, 3) != 3)
		return NULL;
	return json_pack("{s:f, s:f, s:f}", "load1", v[0], "load5", v[1],
	    "load15", v[2]);
}

static double
load1(const json_t *sample)
{
	return json_number_value(json_object_get(sample, "load1"));
}

json_t *
machine_load_span(json_t *start, json_t *end)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	json_t *o = json_object();

	json_object_set_new(o, "start", start != NULL ? start : json_null());
	json_object_set_new(o, "end", end != NULL ? end : json_null());
	json_object_set_new(o, "cpus", json_integer(cpus > 0 ? cpus : 1));
	if (start != NULL && end != NULL)
		json_object_set_new(o, "quiet", json_boolean(load1(start) <
		    (double)(cpus > 0 ? cpus : 1) && load1(end) <
		    (double)(cpus > 0 ? cpus : 1)));
	return o;
}

char *
machine_load_warning(const json_t *span)
{
	if (!json_is_false(json_object_get(span, "quiet")))
		return NULL;
	return xasprintf("load %.1f and %.1f on %lld cores",
	    load1(json_object_get(span, "start")),
	    load1(json_object_get(span, "end")),
	    (long long)json_integer_value(json_object_get(span, "cpus")));
}
