/*
 * amdgpu_pciids.h - an AMD GPU's name from the PCI ID database (pci.ids:
 * Debian's package pci.ids installs /usr/share/misc/pci.ids, other
 * distributions /usr/share/hwdata/pci.ids), for boards whose sysfs has no
 * product_name (every Radeon card and APU).
 *
 * The file's format: a vendor line "1002  Advanced Micro Devices, ...", its
 * device lines "\tDEVICE  name", and under each its subsystem lines
 * "\t\tSUBVENDOR SUBDEVICE  name"; '#' comments; the device classes
 * ("C 03  Display controller") follow the vendors. The board's own name is
 * its subsystem line where the database has one, else the chip's device line.
 *
 * Implemented by amdgpu_pciids.c.
 */
#ifndef GPUWHY_GPU_AMDGPU_PCIIDS_H
#define GPUWHY_GPU_AMDGPU_PCIIDS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	unsigned vendor, device, subsys_vendor, subsys_device;
	char device_name[128];    /* "" when the device is not listed */
	char subsystem_name[128]; /* "" when the board is not listed under it */
} amdgpu_pciids_query;

/* Look q up in the text of a pci.ids file (pure). True when the device line was found. */
bool amdgpu_pciids_find(const char *text, size_t len, amdgpu_pciids_query *q);

/*
 * Look q up in the first of ROOT/usr/share/misc/pci.ids and
 * ROOT/usr/share/hwdata/pci.ids that opens (ROOT "" for the system). The file
 * is read line by line and only up to the end of the vendor's block. False
 * when no database opens or the device is not in it.
 */
bool amdgpu_pciids_lookup(const char *root, amdgpu_pciids_query *q);

/* The name to show: the subsystem's, else the device's; "" when neither. */
const char *amdgpu_pciids_name(const amdgpu_pciids_query *q);

#endif
