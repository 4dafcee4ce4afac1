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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_bufpool.h"

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

static uint64_t next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(2685821657736338717);
}

int main(int argc, char **argv)
{
	unsigned long random_inputs = 0, files = 0, only = ULONG_MAX;
	const char *save = NULL;
	uint64_t seed = 1;
	unsigned count = 0;
	int rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--random") == 0 && i + 1 < argc) {
			random_inputs = strtoul(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			only = strtoul(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--save") == 0 && i + 1 < argc) {
			save = argv[++i];
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: %s [--random N] [--seed S] [--only K] [--save FILE] "
				"[DIR|FILE ...]\n", argv[0]);
			return 2;
		} else {
			if (replay_path(argv[i], &count) != 0)
				rc = 1;
			files++;
		}
	}

	static uint8_t buf[REPLAY_MAX_INPUT];
	for (unsigned long k = 0; k < random_inputs; k++) {
		uint64_t s = (seed + 1) * UINT64_C(0x9e3779b97f4a7c15) + k * 2 + 1;
		size_t len = 1 + next(&s) % 600;
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)(next(&s) >> 56);
		if (only != ULONG_MAX && k != only)
			continue;
		printf("random input %lu (seed %" PRIu64 ", %zu bytes; alone: --seed %" PRIu64
		       " --random %lu --only %lu)\n", k, seed, len, seed, k + 1, k);
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
	printf("%u corpus input(s), %lu random input(s): %s\n", count, random_inputs,
	       rc ? "errors" : "ok");
	return rc;
}
