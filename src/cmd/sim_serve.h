/* sim_serve.h - `gpuwhy sim serve`: a simulated inference server on the simulated GPU. */
#ifndef GPUWHY_CMD_SIM_SERVE_H
#define GPUWHY_CMD_SIM_SERVE_H

/* argv[0] is "serve". Returns a GW_EXIT_* code. */
int sim_serve(int argc, char **argv);

#endif
