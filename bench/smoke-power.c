/*
 * bench/smoke-power.c - how many requests a side a change's smoke needs
 * for the regressions rule to tell a change of CHANGE_PCT. Its input is
 * per-request figures measured on this machine, one prompt a line: the
 * prompt's figure in a first run and in a second one (ms). As in a
 * smoke, where both sides send the same prompts, each trial draws n
 * prompts; the before side is their first measurement, the after side
 * their second made CHANGE_PCT slower; TRIALS times for each n, judged by
 * regress_judge() (the rule review smoke applies) at ALPHA and
 * THRESHOLD_PCT. Prints, per n,
 * how often the test alone was significant, how often the whole rule
 * (significant and at least the threshold worse) flagged it, and how often
 * it flagged an unchanged side (false alarms); then the smallest n whose
 * significance rate, and whose rate of the whole rule, reach 80 %.
 *
 * usage: smoke-power METRIC ALPHA THRESHOLD_PCT CHANGE_PCT [TRIALS]
 * where METRIC is median_tpot_ms, median_ttft_ms or p99_ttft_ms.
 * Deterministic: a fixed seed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regress/regress.h"
#include "stats.h"

static unsigned long long seed = 88172645463325252ULL;

static size_t
pick(size_t n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (size_t)(seed % n);
}

static double
figure(const struct regress_metric *m, double *v, size_t n)
{
	double *s = malloc(n * sizeof(*s));
	double out;

	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	out = stats_percentile_sorted(s, n, m->percentile);
	free(s);
	return out;
}

int
main(int argc, char **argv)
{
	static const size_t ns[] = { 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128,
	    192, 256, 0 };
	const struct regress_metric *m;
	struct stats_samples in, in2;
	struct regress_verdict v;
	double alpha, threshold, change, x, y, *b, *a;
	size_t p;
	size_t k, t, i, trials, sig, flagged, false_alarm, found = 0;
	size_t found_rule = 0;

	if (argc < 5 || (m = regress_metric_find(argv[1])) == NULL ||
	    m->percentile <= 0) {
		fprintf(stderr, "usage: smoke-power median_tpot_ms|"
		    "median_ttft_ms|p99_ttft_ms ALPHA THRESHOLD_PCT CHANGE_PCT "
		    "[TRIALS] < samples\n");
		return 2;
	}
	alpha = atof(argv[2]);
	threshold = atof(argv[3]);
	change = atof(argv[4]);
	trials = argc > 5 ? (size_t)atol(argv[5]) : 400;
	memset(&in, 0, sizeof(in));
	memset(&in2, 0, sizeof(in2));
	while (scanf("%lf %lf", &x, &y) == 2)
		if (x > 0 && y > 0) {
			stats_samples_add(&in, x);
			stats_samples_add(&in2, y);
		}
	if (in.n < 2) {
		fprintf(stderr, "smoke-power: fewer than 2 samples\n");
		return 1;
	}
	printf("%s: %zu prompts measured twice; a %.0f %% change, alpha %g, "
	    "threshold %g %%, %zu trials per n\n", m->name, in.n, change,
	    alpha, threshold, trials);
	printf("  %5s  %12s  %12s  %12s\n", "n", "significant", "flagged",
	    "false alarm");
	for (k = 0; ns[k] != 0; k++) {
		b = malloc(ns[k] * sizeof(*b));
		a = malloc(ns[k] * sizeof(*a));
		sig = flagged = false_alarm = 0;
		for (t = 0; t < trials; t++) {
			for (i = 0; i < ns[k]; i++) {
				p = pick(in.n);
				b[i] = in.v[p];
				a[i] = in2.v[p] * (1 + change / 100);
			}
			regress_judge(&v, m, figure(m, b, ns[k]), figure(m, a,
			    ns[k]), a, ns[k], b, ns[k], threshold, alpha, 2);
			sig += v.significant;
			flagged += v.regressed;
			for (i = 0; i < ns[k]; i++)
				a[i] /= 1 + change / 100;
			regress_judge(&v, m, figure(m, b, ns[k]), figure(m, a,
			    ns[k]), a, ns[k], b, ns[k], threshold, alpha, 2);
			false_alarm += v.regressed;
		}
		printf("  %5zu  %11.1f%%  %11.1f%%  %11.1f%%\n", ns[k],
		    100.0 * (double)sig / (double)trials,
		    100.0 * (double)flagged / (double)trials,
		    100.0 * (double)false_alarm / (double)trials);
		if (found == 0 && sig * 5 >= trials * 4)
			found = ns[k];
		if (found_rule == 0 && flagged * 5 >= trials * 4)
			found_rule = ns[k];
		free(b);
		free(a);
	}
	if (found > 0)
		printf("%s: %zu requests a side make a %.0f %% change "
		    "significant at alpha %g in 80 %% of trials", m->name,
		    found, change, alpha);
	else
		printf("%s: more than %zu requests a side are needed to make a "
		    "%.0f %% change significant at alpha %g", m->name,
		    ns[k - 1], change, alpha);
	if (found_rule > 0)
		printf("; %zu for the whole rule (also at least %g %% worse) "
		    "to flag it\n", found_rule, threshold);
	else
		printf("; the whole rule (also at least %g %% worse) flags it "
		    "in fewer than 80 %% of trials up to %zu\n", threshold,
		    ns[k - 1]);
	stats_samples_free(&in);
	stats_samples_free(&in2);
	return 0;
}
