/*
 * sim_amdfs.h - a scenario's AMD GPUs as the files the amdgpu kernel driver
 * writes: sysfs (ROOT/sys/class/drm/cardN/device), hwmon and DRM fdinfo
 * (ROOT/proc/PID/fdinfo/N). gpuwhy's amdgpu reader is pointed at ROOT, so the
 * simulated AMD GPU is read by the same code as a real one.
 *
 * Values follow the same model as the simulated NVML (sim_model.h: load
 * segments, episodes, power, temperature over the last 30 s) at scenario time
 * t from the shared scenario clock, so an NVIDIA and an AMD GPU of one
 * scenario are busy at the same moments. The card number is the GPU's place
 * among the scenario's AMD GPUs (card0 is the first); the PCI address is the
 * scenario's.
 *
 * Files are replaced whole (written beside, then renamed), so a reader never
 * sees half a file. Nothing here prints.
 */
#ifndef GPUWHY_SIM_AMDFS_H
#define GPUWHY_SIM_AMDFS_H

#include <stdint.h>

#include "sim_amdwl.h"
#include "sim_scenario.h"

/*
 * Write every file of AMD GPU g (an index into s->gpus with amd set) below
 * root for scenario time t: the identity files the first time (static), the
 * readings every time. busy_ns_clock is the seconds the processes' engine
 * counters have run (the real time since the scenario's origin, so their
 * rates hold when the clock is pinned). After the GPU's lost_after_s its
 * card directory is gone, as a card the driver lost. wl (NULL: none) is the
 * `gpuwhy sim train` workloads on it, added to the scenario's activity, memory
 * and processes. Returns 0, or -1 with errno set.
 */
int sim_amdfs_write(const sim_scenario *s, int g, const char *root, double t, double busy_clock_s,
                    bool with_static, const sim_amdwl *wl);

#endif
