#!/usr/bin/env python3
"""A second reader of amdgpu's sysfs and hwmon files, written from the kernel's
documents alone (Documentation/gpu/amdgpu/driver-misc.rst and thermal.rst,
Documentation/hwmon/sysfs-interface.rst, the PCI sysfs ABI), to check what
gpuwhy's reader makes of the same files.

    amdgpu_files.py ROOT

prints one line per AMD card below ROOT/sys/class/drm, in PCI address order,
as `gpuwhy query --format=csv,noheader,nounits` does for FIELDS below; a file
that is missing or does not parse is [N/A].
"""
import glob
import math
import os
import re
import sys

FIELDS = ("pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,"
          "power.draw,power.limit,temperature.gpu,temperature.memory,fan.speed,"
          "clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,pcie.link.gen.current,"
          "pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max")
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
    temp = sensor(hw, "temp", "edge", temps)
    if temp is None:
        temp = sensor(hw, "temp", "junction", temps)
    mem_temp = sensor(hw, "temp", "mem", temps)
    pwm = integer(hw + "/pwm1") if hw else None
    pwm_max = (integer(hw + "/pwm1_max") if hw else None) or 255
    sclk_cur, sclk_top = dpm(dev + "/pp_dpm_sclk")
    mclk_cur, mclk_top = dpm(dev + "/pp_dpm_mclk")
    sclk, mclk = sensor(hw, "freq", "sclk", freqs), sensor(hw, "freq", "mclk", freqs)  # Hz
    dom, bus, rest = bdf.split(":")
    slot, fn = rest.split(".")
    vals = [
        "%08X:%02X:%02X.%X" % (int(dom, 16), int(bus, 16), int(slot, 16), int(fn, 16)),
        fmt(integer(dev + "/gpu_busy_percent")),
        fmt(integer(dev + "/mem_busy_percent")),
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
    ]
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
