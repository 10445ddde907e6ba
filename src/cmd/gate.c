/*
 * gate.c - `gpuwhy gate`: a reverse proxy in front of an inference server
 * that limits, queues fairly, batches and watches the GPU (src/gate/).
 *
 * Settings come from the defaults, then --config FILE, then the flags, so
 * a flag always wins (gate/config_args.c); SIGHUP repeats the same steps and
 * applies the result (limits, keys, batching), SIGTERM drains.
 */
#include "cmd/cmd.h"
#include "gate/config.h"
#include "gate/config_args.h"
#include "gate/gate.h"
#include "util/err.h"
#include "util/opt.h"

int cmd_gate(int argc, char **argv, const gw_global *gl)
{
	(void)gl;
	gate_config c;
	int rc = gate_config_from_args(argc, argv, &c);
	if (rc == OPT_HELP) {
		gate_config_free(&c);
		return GW_EXIT_OK;
	}
	if (!rc)
		rc = gate_config_exposure(&c);
	if (rc) {
		gate_config_free(&c);
		return rc;
	}
	gate_args a = {argc, argv};
	return gate_run(&c, gate_config_reload_args, &a);
}
