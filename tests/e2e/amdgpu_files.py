#!/usr/bin/env python3
"""A second reader of amdgpu's sysfs and hwmon files, written from the kernel's
documents alone (Documentation/gpu/amdgpu/driver-misc.rst and thermal.rst,
Documentation/hwmon/sysfs-interface.rst, the PCI sysfs ABI) and the kernel's
struct gpu_metrics_v1_1..v1_3 and v2_1..v2_2 (kgd_pp_interface.h) for the
binary gpu_metrics table, to check what gpuwhy's reader makes of the same
files. As gpuwhy does, a value of gpu_metrics only stands in for one sysfs and
hwmon do not give, and its indep_throttle_status gives the clock event reasons.

    amdgpu_files.py ROOT

prints one line per AMD card below ROOT/sys/class/drm, in PCI address order,
as `gpuwhy query --format=csv,noheader,nounits` does for FIELDS below; a file
that is missing or does not parse is [N/A].
"""
import glob
import math
import os
import re
import struct
import sys

FIELDS = ("pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,"
          "power.draw,power.limit,temperature.gpu,temperature.memory,fan.speed,"
          "clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,pcie.link.gen.current,"
          "pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,"
          "clocks_event_reasons.active,clocks_event_reasons.sw_power_cap,"
          "clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown,"
          "clocks_event_reasons.hw_slowdown")
NA = "[N/A]"
MIB = 1 << 20
# PCIe transfer rate per lane (GT/s) -> generation
GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def integer(path):
    t = text(path)
    return int(t) if t is not None and re.fullmatch(r"-?\d+", t) else None


def rounded(x):
    return int(math.floor(x + 0.5))


def hwmon_of(dev):
    for d in sorted(glob.glob(dev + "/hwmon/hwmon*")):
        if text(d + "/name") == "amdgpu":
            return d
    return None


def sensor(hw, kind, label, numbered):
    """hwmon's KINDn_input whose KINDn_label is label; a sensor without a label
    is taken by the driver's numbering (temp1 edge, temp2 junction, temp3 mem;
    freq1 sclk, freq2 mclk)."""
    if hw is None:
        return None
    for p in sorted(glob.glob(hw + "/%s*_input" % kind)):
        n = re.fullmatch(kind + r"(\d+)_input", os.path.basename(p)).group(1)
        lab = text("%s/%s%s_label" % (hw, kind, n))
        if lab == label or (lab is None and numbered.get(int(n)) == label):
            return integer(p)
    return None


def dpm(path):
    """pp_dpm_*: lines `N: 1400Mhz` with `*` on the current one -> (current, highest)."""
    t = text(path)
    if not t:
        return None, None
    cur, top = None, None
    for line in t.splitlines():
        m = re.fullmatch(r"\s*\d+:\s*(\d+)\s*[Mm]hz\s*(\*?)\s*", line)
        if not m:
            continue
        mhz = int(m.group(1))
        top = mhz if top is None else max(top, mhz)
        if m.group(2):
            cur = mhz
    return cur, top


def link_gen(path):
    t = text(path)
    m = re.match(r"([\d.]+) GT/s", t or "")
    return GEN.get(float(m.group(1))) if m else None


# gpu_metrics layouts: (name, bytes, count) in the kernel struct's order
HEADER = [("structure_size", 2, 1), ("format_revision", 1, 1), ("content_revision", 1, 1)]
V1_1 = HEADER + [(n, 2, 1) for n in (
    "temperature_edge", "temperature_hotspot", "temperature_mem", "temperature_vrgfx",
    "temperature_vrsoc", "temperature_vrmem", "average_gfx_activity", "average_umc_activity",
    "average_mm_activity", "average_socket_power")] + [
    ("energy_accumulator", 8, 1), ("system_clock_counter", 8, 1)] + [
    ("average_%s_frequency" % c, 2, 1) for c in
    ("gfxclk", "socclk", "uclk", "vclk0", "dclk0", "vclk1", "dclk1")] + [
    ("current_" + c, 2, 1) for c in
    ("gfxclk", "socclk", "uclk", "vclk0", "dclk0", "vclk1", "dclk1")] + [
    ("throttle_status", 4, 1), ("current_fan_speed", 2, 1), ("pcie_link_width", 2, 1),
    ("pcie_link_speed", 2, 1), ("padding", 2, 1), ("gfx_activity_acc", 4, 1),
    ("mem_activity_acc", 4, 1), ("temperature_hbm", 2, 4)]
V1_2 = V1_1 + [("firmware_timestamp", 8, 1)]
V1_3 = V1_2 + [("voltage_soc", 2, 1), ("voltage_gfx", 2, 1), ("voltage_mem", 2, 1),
               ("padding1", 2, 1), ("indep_throttle_status", 8, 1)]
V2_1 = HEADER + [
    ("temperature_gfx", 2, 1), ("temperature_soc", 2, 1), ("temperature_core", 2, 8),
    ("temperature_l3", 2, 2), ("average_gfx_activity", 2, 1), ("average_mm_activity", 2, 1),
    ("system_clock_counter", 8, 1), ("average_socket_power", 2, 1),
    ("average_cpu_power", 2, 1), ("average_soc_power", 2, 1), ("average_gfx_power", 2, 1),
    ("average_core_power", 2, 8)] + [
    ("average_%s_frequency" % c, 2, 1) for c in
    ("gfxclk", "socclk", "uclk", "fclk", "vclk", "dclk")] + [
    ("current_" + c, 2, 1) for c in ("gfxclk", "socclk", "uclk", "fclk", "vclk", "dclk")] + [
    ("current_coreclk", 2, 8), ("current_l3clk", 2, 2), ("throttle_status", 4, 1),
    ("fan_pwm", 2, 1), ("padding", 2, 3)]
V2_2 = V2_1 + [("indep_throttle_status", 8, 1)]
LAYOUTS = {(1, 1): V1_1, (1, 2): V1_2, (1, 3): V1_3, (2, 1): V2_1, (2, 2): V2_2}
# what a table's fields stand in for, and their scale: v1 in C, W, %; v2 in 1/100 C, mW, 1/100 %
STANDS_IN = {
    1: {"temperature_edge": ("edge", 1), "temperature_hotspot": ("junction", 1),
        "temperature_mem": ("mem", 1), "average_socket_power": ("power", 1),
        "average_gfx_activity": ("busy", 1), "average_umc_activity": ("mem_busy", 1),
        "current_gfxclk": ("sclk", 1), "current_uclk": ("mclk", 1)},
    2: {"temperature_gfx": ("edge", 0.01), "average_socket_power": ("power", 0.001),
        "average_gfx_activity": ("busy", 0.01), "current_gfxclk": ("sclk", 1),
        "current_uclk": ("mclk", 1)},
}
# indep_throttle_status bits (SMU_THROTTLER_*) -> NVML's reason bits
REASONS = (("sw_power_cap", range(0, 8), 0x4), ("sw_thermal_slowdown", range(32, 44), 0x20),
           ("hw_thermal_slowdown", range(44, 46), 0x40), ("hw_slowdown", range(46, 48), 0x8))


def gpu_metrics(dev):
    """The table's values (all ones: not filled) and its throttle bits, or ({}, None)."""
    try:
        with open(dev + "/gpu_metrics", "rb") as f:
            b = f.read()
    except OSError:
        return {}, None
    if len(b) < 4:
        return {}, None
    fields = LAYOUTS.get((b[2], b[3]))
    if fields is None:
        return {}, None
    at, off, align = {}, 0, 1
    for name, size, count in fields:
        off = -(-off // size) * size
        at[name] = (off, size)
        off += size * count
        align = max(align, size)
    size = -(-off // align) * align
    if struct.unpack_from("<H", b)[0] != size or len(b) < size:
        return {}, None
    code = {1: "B", 2: "H", 4: "I", 8: "Q"}
    vals = {}
    for name, (what, scale) in STANDS_IN[b[2]].items():
        o, n = at[name]
        v = struct.unpack_from("<" + code[n], b, o)[0]
        if v != (1 << (8 * n)) - 1:
            vals[what] = v * scale
    throttle = None
    if "indep_throttle_status" in at:
        v = struct.unpack_from("<Q", b, at["indep_throttle_status"][0])[0]
        throttle = None if v == (1 << 64) - 1 else v
    return vals, throttle


def either(first, second):
    return first if first is not None else second


def reason_cols(throttle):
    if throttle is None:
        return [NA] * (1 + len(REASONS))
    mask = 0
    for _, bits, nv in REASONS:
        if any(throttle >> b & 1 for b in bits):
            mask |= nv
    return ["0x%016X" % mask] + [
        "Active" if mask & nv else "Not Active" for _, _, nv in REASONS]


def fmt(v, spec="%d"):
    return NA if v is None else spec % v


def card_line(dev, bdf):
    hw = hwmon_of(dev)
    temps = {1: "edge", 2: "junction", 3: "mem"}
    freqs = {1: "sclk", 2: "mclk"}
    used, total = integer(dev + "/mem_info_vram_used"), integer(dev + "/mem_info_vram_total")
    power = None
    for name in ("power1_average", "power1_input"):  # microwatts
        power = integer("%s/%s" % (hw, name)) if hw else None
        if power is not None:
            break
    cap = integer(hw + "/power1_cap") if hw else None
    gm, throttle = gpu_metrics(dev)
    if power is None and "power" in gm:
        power = gm["power"] * 1e6
    temp = either(sensor(hw, "temp", "edge", temps), gm["edge"] * 1000 if "edge" in gm else None)
    if temp is None:
        temp = either(sensor(hw, "temp", "junction", temps),
                      gm["junction"] * 1000 if "junction" in gm else None)
    mem_temp = either(sensor(hw, "temp", "mem", temps), gm["mem"] * 1000 if "mem" in gm else None)
    pwm = integer(hw + "/pwm1") if hw else None
    pwm_max = (integer(hw + "/pwm1_max") if hw else None) or 255
    sclk_cur, sclk_top = dpm(dev + "/pp_dpm_sclk")
    mclk_cur, mclk_top = dpm(dev + "/pp_dpm_mclk")
    sclk, mclk = sensor(hw, "freq", "sclk", freqs), sensor(hw, "freq", "mclk", freqs)  # Hz
    sclk_cur, mclk_cur = either(sclk_cur, gm.get("sclk")), either(mclk_cur, gm.get("mclk"))
    busy = either(integer(dev + "/gpu_busy_percent"), gm.get("busy"))
    mem_busy = either(integer(dev + "/mem_busy_percent"), gm.get("mem_busy"))
    dom, bus, rest = bdf.split(":")
    slot, fn = rest.split(".")
    vals = [
        "%08X:%02X:%02X.%X" % (int(dom, 16), int(bus, 16), int(slot, 16), int(fn, 16)),
        fmt(None if busy is None else rounded(busy)),
        fmt(None if mem_busy is None else rounded(mem_busy)),
        fmt(None if used is None else -(-used // MIB)),
        fmt(None if total is None else total // MIB),
        fmt(None if power is None else power / 1e6, "%.2f"),
        fmt(None if cap is None else cap / 1e6, "%.2f"),
        fmt(None if temp is None else rounded(temp / 1000)),
        fmt(None if mem_temp is None else rounded(mem_temp / 1000)),
        fmt(None if pwm is None else rounded(pwm * 100 / pwm_max)),
        fmt(rounded(sclk / 1e6) if sclk is not None else sclk_cur),
        fmt(rounded(mclk / 1e6) if mclk is not None else mclk_cur),
        fmt(sclk_top),
        fmt(mclk_top),
        fmt(link_gen(dev + "/current_link_speed")),
        fmt(link_gen(dev + "/max_link_speed")),
        fmt(integer(dev + "/current_link_width")),
        fmt(integer(dev + "/max_link_width")),
    ] + reason_cols(throttle)
    return ", ".join(vals)


def main():
    root = sys.argv[1]
    cards = []
    for c in glob.glob(root + "/sys/class/drm/card*"):
        if not re.fullmatch(r"card\d+", os.path.basename(c)):
            continue  # connectors (card0-DP-1)
        dev = c + "/device"
        if text(dev + "/vendor") != "0x1002":
            continue
        if os.path.islink(dev):
            bdf = os.path.basename(os.path.realpath(dev))
        else:  # a device directory (some APUs): the address is in uevent
            m = re.search(r"^PCI_SLOT_NAME=(\S+)$", text(dev + "/uevent") or "", re.M)
            if not m:
                continue
            bdf = m.group(1)
        cards.append((bdf.lower(), dev))
    for bdf, dev in sorted(cards):
        print(card_line(dev, bdf))


if __name__ == "__main__":
    main()
