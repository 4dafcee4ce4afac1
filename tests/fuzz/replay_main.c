/* SPDX-License-Identifier: MIT */
/*
 * replay_main.c - runs the bufpool fuzz harness without libFuzzer: replays
 * every file of the given corpus directories (or single files), then N
 * pseudo-random inputs derived from a seed, so the harness runs as a normal
 * test under gcc and the sanitizer builds.
 *
 *   replay_bufpool [--random N] [--seed S] [--only K] [--save FILE] [DIR|FILE ...]
 *
 * --only K runs just random input K; --save FILE also writes it to FILE
 * (to add to the corpus or replay alone).
 *
 * A failing input aborts inside the harness after its name (or its seed
 * and index) was printed, so it can be saved and replayed alone.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_bufpool.h"
#include "util/opt.h"
#include "util/prng.h"

#define REPLAY_MAX_INPUT 4096

static int replay_file(const char *path)
{
	static uint8_t buf[REPLAY_MAX_INPUT];
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	printf("replay %s (%zu bytes)\n", path, n);
	fflush(stdout);
	fuzz_bufpool_one(buf, n);
	return 0;
}

static int filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static int replay_path(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	struct dirent **names;
	int n = scandir(path, &names, filter, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char full[4096];
		snprintf(full, sizeof(full), "%s/%s", path, names[i]->d_name);
		if (rc == 0 && replay_file(full) != 0)
			rc = -1;
		(*count)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--random N] [--seed S] [--only K] [--save FILE] "
		"[DIR|FILE ...]\n", prog);
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t random_inputs = 0, only = UINT64_MAX;
	const char *save = NULL;
	uint64_t seed = 1;
	unsigned count = 0;
	int rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--random") == 0 && i + 1 < argc) {
			if (util_opt_u64(argv[0], a, argv[++i], 0, UINT64_MAX - 1, &random_inputs))
				return usage(argv[0]);
		} else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
			if (util_opt_u64(argv[0], a, argv[++i], 0, UINT64_MAX - 1, &only))
				return usage(argv[0]);
		} else if (strcmp(a, "--save") == 0 && i + 1 < argc) {
			save = argv[++i];
		} else if (strcmp(a, "--seed") == 0 && i + 1 < argc) {
			if (util_opt_u64(argv[0], a, argv[++i], 0, UINT64_MAX, &seed))
				return usage(argv[0]);
		} else if (a[0] == '-') {
			return usage(argv[0]);
		} else {
			if (replay_path(a, &count) != 0)
				rc = 1;
		}
	}

	static uint8_t buf[REPLAY_MAX_INPUT];
	for (uint64_t k = 0; k < random_inputs; k++) {
		uint64_t s = util_rand_seed(seed, k);
		size_t len = 1 + util_rand_next(&s) % 600;
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)(util_rand_next(&s) >> 56);
		if (only != UINT64_MAX && k != only)
			continue;
		printf("random input %" PRIu64 " (seed %" PRIu64 ", %zu bytes; alone: --seed %" PRIu64
		       " --random %" PRIu64 " --only %" PRIu64 ")\n", k, seed, len, seed, k + 1, k);
		fflush(stdout);
		if (save) {
			FILE *f = fopen(save, "wb");
			if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
				fprintf(stderr, "%s: cannot write\n", save);
				return 1;
			}
		}
		fuzz_bufpool_one(buf, len);
	}
	printf("%u corpus input(s), %" PRIu64 " random input(s): %s\n", count, random_inputs,
	       rc ? "errors" : "ok");
	return rc;
}
