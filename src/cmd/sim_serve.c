/*
 * sim_serve.c - `gpuwhy sim serve`: a simulated inference server. The
 * options are parsed here; the server is train/serve.c.
 */
#include <stdio.h>

#include "cmd/sim_serve.h"
#include "train/serve.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/opt.h"

#define SERVE_MS(l, t, h)                                                                          \
	OPT_DOUBLE(0, l, "MS", t, 0, 1e7, h, .why = N_("'%s' is not a non-negative number"),       \
	           .hint = N_("give a number such as 20"))
#define SERVE_N(l, a, t, lo, hi, h)                                                                \
	OPT_INT(0, l, a, t, lo, hi, h, .why = N_("'%s' is out of range"),                          \
	        .hint = N_("give a whole number"))

static int parse_serve(int argc, char **argv, train_serve_opts *o)
{
	*o = (train_serve_opts){.batch_ms = 20,
	                        .item_ms = 2,
	                        .mem_mib = 8192,
	                        .model_mib = 1024,
	                        .item_mib = 32,
	                        .max_batch = 256,
	                        .dim = 8,
	                        .gpu = 0};
	const char *listen = "127.0.0.1:8000";
	const opt_def opts[] = {
	    OPT_STRING(0, "listen", "ADDR:PORT", &listen,
	               "where to listen (default 127.0.0.1:8000; port 0: any)"),
	    SERVE_MS("batch-ms", &o->batch_ms, "fixed cost of one batch (default 20)"),
	    SERVE_MS("item-ms", &o->item_ms, "cost of each input (default 2)"),
	    SERVE_N("max-batch", "N", &o->max_batch, 1, 100000,
	            "most inputs in one request (default 256; 400 beyond)"),
	    SERVE_MS("mem-mib", &o->mem_mib, "GPU memory the server may use (default 8192)"),
	    SERVE_MS("model-mib", &o->model_mib, "memory the model holds (default 1024)"),
	    SERVE_MS("item-mib", &o->item_mib,
	             "memory each input needs while it runs (default 32); past --mem-mib the batch "
	             "fails with CUDA out of memory"),
	    SERVE_N("dim", "D", &o->dim, 1, 100000, "embedding length (default 8)"),
	    SERVE_N("gpu", "I", &o->gpu, 0, 63, "the simulated GPU (default 0)"),
	    OPT_FLAG(0, "item-usage", &o->item_usage,
	             "give each item of data its own usage too, besides the whole request's"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "sim serve",
	    .usage = "--sim SCENARIO sim serve [OPTIONS]",
	    .about =
	        N_("A simulated inference server. POST a JSON body with \"input\": [..] to any\n"
	           "path (e.g. /v1/embeddings); the answer is {\"data\": [{\"index\", "
	           "\"embedding\"}]}\nafter batch-ms + item-ms x inputs of work on the "
	           "simulated GPU, one batch at\na time. \"stream\": true answers with "
	           "server-sent events. GET /health, /stats."),
	    .opts = opts};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	snprintf(o->listen, sizeof o->listen, "%s", listen);
	return rc;
}

int sim_serve(int argc, char **argv)
{
	train_serve_opts o;
	int rc = parse_serve(argc, argv, &o);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	return train_serve_run(&o);
}
