/*
 * host_pcitopo.h - NICs and PCIe distances from sysfs, for `gpuwhy topo -m`.
 *
 * NCCL places traffic by how far a GPU is from each NIC on the PCIe tree;
 * nvidia-smi topo -m shows it. The tree is read from sysfs under a root
 * ("/" normally, a fixture directory in tests): a device's path below
 * /sys/devices/pciDDDD:BB/ lists the bridges above it.
 */
#ifndef GPUWHY_HOST_PCITOPO_H
#define GPUWHY_HOST_PCITOPO_H

#define PCITOPO_MAX_NICS 64

typedef struct {
	char name[64]; /* "mlx5_0" (RDMA) or "eth0" (network device without one) */
	char bdf[16];  /* "0000:1c:00.0" */
	int numa_node; /* -1 when unknown */
	int rdma;      /* 1 when it came from /sys/class/infiniband */
} pcitopo_nic;

/*
 * The RDMA devices of ROOT/sys/class/infiniband, then the PCI network
 * devices of ROOT/sys/class/net that no RDMA device already names, each
 * list sorted by name. Returns the count (0 when none or no sysfs).
 */
int pcitopo_nics(const char *root, pcitopo_nic *out, int max);

/*
 * How two PCI functions ("0000:1b:00.0", any case, 4 or 8 domain digits)
 * connect, as nvmlGpuTopologyLevel_t: 0 same device, 10 PIX (at most one
 * bridge below their common switch), 20 PXB (more bridges), 30 PHB (only
 * the host bridge in common), 40 NODE (other host bridge, same NUMA node),
 * 50 SYS (other NUMA node); -1 when either is not in sysfs.
 */
int pcitopo_level(const char *root, const char *bdf_a, const char *bdf_b);

/* "00000000:1B:00.0" -> "0000:1b:00.0" (sysfs spelling). False when malformed. */
int pcitopo_sysfs_bdf(const char *bus_id, char *out, int outlen);

#endif
