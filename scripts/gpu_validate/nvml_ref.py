#!/usr/bin/env python3
"""A second, independent NVML reader for `gpu-validate --sim`: where no nvidia-smi
exists, it answers the subset of nvidia-smi's command line the kit uses, straight
from libnvidia-ml.so.1 through ctypes (the library named by GPUWHY_NVML, else the
system's). Output formats follow nvidia-smi's:

  nvml_ref.py -L
  nvml_ref.py --query-gpu=FIELD,... --format=csv,noheader,nounits
  nvml_ref.py --query-compute-apps=pid,used_memory --format=csv,noheader,nounits
  nvml_ref.py topo -m
"""
import ctypes
import os
import sys

NVML_SUCCESS = 0


class PciInfo(ctypes.Structure):
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint),
                ("bus", ctypes.c_uint), ("device", ctypes.c_uint),
                ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                ("busId", ctypes.c_char * 32)]


class Memory(ctypes.Structure):
    """nvmlMemory_v2_t: what nvidia-smi reads since R510 (reserved memory apart)."""
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class ProcessInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


def load():
    path = os.environ.get("GPUWHY_NVML") or "libnvidia-ml.so.1"
    lib = ctypes.CDLL(path)
    lib.nvmlErrorString.restype = ctypes.c_char_p
    rc = lib.nvmlInit_v2()
    if rc != NVML_SUCCESS:
        sys.exit("nvml_ref: nvmlInit_v2: %s" % lib.nvmlErrorString(rc).decode())
    return lib


def handles(lib):
    n = ctypes.c_uint()
    lib.nvmlDeviceGetCount_v2(ctypes.byref(n))
    out = []
    for i in range(n.value):
        h = ctypes.c_void_p()
        lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
        out.append(h)
    return out


def text(fn, *args):
    buf = ctypes.create_string_buffer(256)
    if fn(*args, buf, 256) != NVML_SUCCESS:
        return None
    return buf.value.decode()


def uint(fn, *args):
    v = ctypes.c_uint()
    if fn(*args, ctypes.byref(v)) != NVML_SUCCESS:
        return None
    return v.value


def field(lib, i, h, name):
    """One --query-gpu field as nvidia-smi prints it with nounits; None for [N/A]."""
    if name == "index":
        return str(i)
    if name == "name":
        return text(lib.nvmlDeviceGetName, h)
    if name == "uuid":
        return text(lib.nvmlDeviceGetUUID, h)
    if name == "serial":
        return text(lib.nvmlDeviceGetSerial, h)
    if name == "vbios_version":
        return text(lib.nvmlDeviceGetVbiosVersion, h)
    if name == "driver_version":
        return text(lib.nvmlSystemGetDriverVersion)
    if name == "pci.bus_id":
        p = PciInfo()
        return p.busId.decode() if lib.nvmlDeviceGetPciInfo_v3(h, ctypes.byref(p)) == 0 else None
    if name in ("memory.total", "memory.used", "memory.free"):
        m = Memory(version=ctypes.sizeof(Memory) | (2 << 24))
        if lib.nvmlDeviceGetMemoryInfo_v2(h, ctypes.byref(m)) != NVML_SUCCESS:
            return None
        return str(getattr(m, name.split(".")[1]) >> 20)
    if name in ("utilization.gpu", "utilization.memory"):
        u = Utilization()
        if lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(u)) != NVML_SUCCESS:
            return None
        return str(u.gpu if name.endswith("gpu") else u.memory)
    watts = {"power.draw": lib.nvmlDeviceGetPowerUsage,
             "power.limit": lib.nvmlDeviceGetPowerManagementLimit,
             "power.default_limit": lib.nvmlDeviceGetPowerManagementDefaultLimit,
             "enforced.power.limit": lib.nvmlDeviceGetEnforcedPowerLimit}
    if name in watts:
        v = uint(watts[name], h)
        return None if v is None else "%.2f" % (v / 1000.0)
    if name == "temperature.gpu":
        return none_or_str(uint(lib.nvmlDeviceGetTemperature, h, 0))
    clocks = {"graphics": 0, "sm": 1, "memory": 2}
    parts = name.split(".")
    if parts[0] == "clocks" and parts[-1] in clocks:
        fn = lib.nvmlDeviceGetMaxClockInfo if parts[1] == "max" else lib.nvmlDeviceGetClockInfo
        return none_or_str(uint(fn, h, clocks[parts[-1]]))
    if name == "pstate":
        v = ctypes.c_int()
        if lib.nvmlDeviceGetPerformanceState(h, ctypes.byref(v)) != NVML_SUCCESS or v.value == 32:
            return None
        return "P%d" % v.value
    links = {"pcie.link.gen.current": lib.nvmlDeviceGetCurrPcieLinkGeneration,
             "pcie.link.gen.max": lib.nvmlDeviceGetMaxPcieLinkGeneration,
             "pcie.link.width.current": lib.nvmlDeviceGetCurrPcieLinkWidth,
             "pcie.link.width.max": lib.nvmlDeviceGetMaxPcieLinkWidth}
    if name in links:
        return none_or_str(uint(links[name], h))
    sys.exit("nvml_ref: field %s is not known here" % name)


def none_or_str(v):
    return None if v is None else str(v)


def query_gpu(lib, fields):
    for i, h in enumerate(handles(lib)):
        vals = [field(lib, i, h, f) for f in fields]
        print(", ".join("[N/A]" if v is None else v for v in vals))


def compute_apps(lib):
    for h in handles(lib):
        n = ctypes.c_uint(64)
        procs = (ProcessInfo * 64)()
        if lib.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(n), procs) != NVML_SUCCESS:
            continue
        for p in procs[:n.value]:
            print("%d, %d" % (p.pid, p.usedGpuMemory >> 20))


def list_gpus(lib):
    for i, h in enumerate(handles(lib)):
        print("GPU %d: %s (UUID: %s)" % (i, text(lib.nvmlDeviceGetName, h), text(lib.nvmlDeviceGetUUID, h)))


LEVELS = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}


def topo(lib):
    hs = handles(lib)
    print("\t" + "\t".join("GPU%d" % i for i in range(len(hs))))
    for i, a in enumerate(hs):
        row = []
        for j, b in enumerate(hs):
            if i == j:
                row.append("X")
                continue
            lvl = ctypes.c_int()
            rc = lib.nvmlDeviceGetTopologyCommonAncestor(a, b, ctypes.byref(lvl))
            row.append(LEVELS.get(lvl.value, "?") if rc == NVML_SUCCESS else "N/A")
        print("GPU%d\t" % i + "\t".join(row))


def main(argv):
    lib = load()
    opts = dict(a.split("=", 1) if "=" in a else (a, "") for a in argv)
    if "-L" in opts:
        list_gpus(lib)
    elif "--query-gpu" in opts:
        query_gpu(lib, opts["--query-gpu"].split(","))
    elif "--query-compute-apps" in opts:
        compute_apps(lib)
    elif argv[:2] == ["topo", "-m"]:
        topo(lib)
    else:
        sys.exit(__doc__)
    lib.nvmlShutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
