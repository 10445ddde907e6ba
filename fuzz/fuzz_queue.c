/* libFuzzer: the queue's parsers of outside input: task files (text and JSON),
 * log tails (OOM recognition, token runs), Slurm command output (job states, a job's
 * allocation: scontrol -d, sacct, hostlists). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "queue/oom.h"
#include "queue/slurm.h"
#include "queue/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';

	queue_spec tmpl;
	queue_spec_init(&tmpl);
	tmpl.cwd = strdup("/nonexistent-fuzz-dir");
	for (int mode = 0; mode < 2; mode++) {
		queue_spec *specs = NULL;
		gw_fail err;
		int n = queue_spec_parse_file("fuzz", text, size, mode == 0, &tmpl, &specs, &err);
		for (int i = 0; i < n; i++)
			queue_spec_free(&specs[i]);
		free(specs);
	}
	queue_spec_free(&tmpl);

	queue_oom_info oom;
	queue_oom_scan(text, size, &oom);
	queue_count_token_runs(text, size, "0123456789abcdef");

	/* The Slurm parsers take NUL-terminated text. */
	queue_slurm_job job;
	char id[32];
	int e, s;
	queue_slurm_parse_scontrol(text, &job);
	queue_slurm_parse_sacct(text, &job);
	queue_slurm_parse_sbatch(text, id, sizeof id);
	queue_slurm_exitcode(text, &e, &s);
	queue_slurm_classify(text);
	queue_slurm_time(text);
	/* a job's allocation: the text as scontrol's and as sacct's, hostlists, GRES indices */
	queue_slurm_alloc *al = malloc(sizeof *al);
	queue_slurm_parse_alloc("101", text, text, al);
	queue_slurm_parse_alloc("101", NULL, text, al);
	free(al);
	char(*hosts)[QUEUE_SLURM_HOST] = malloc(64 * sizeof *hosts);
	queue_slurm_hostlist(text, hosts, 64);
	free(hosts);
	uint64_t mask;
	queue_slurm_idx_mask(text, &mask);
	free(text);
	return 0;
}
