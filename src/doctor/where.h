/*
 * where.h - where the doctor runs: container, WSL, PID namespace (where.c).
 */
#ifndef GPUWHY_DOCTOR_WHERE_H
#define GPUWHY_DOCTOR_WHERE_H

#include <stdbool.h>

typedef struct {
	bool container;
	char container_kind[32]; /* "Docker", "Podman", "Kubernetes", "containerd", "LXC", ... */
	char container_why[160]; /* the evidence */
	int wsl;                 /* 0 not WSL, 1 WSL1, 2 WSL2 */
	char kernel_release[128];
	bool pidns_known;
	bool pidns_nested;
} doctor_where;

#endif
