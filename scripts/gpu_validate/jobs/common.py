"""Shared by the kit's PyTorch jobs: argument parsing, the CUDA check, step lines."""
import argparse
import sys
import time


def parser(doc):
    p = argparse.ArgumentParser(description=doc)
    p.add_argument("--seconds", type=float, default=30.0, help="how long to run")
    return p


def cuda_or_exit():
    """torch, with a CUDA device, or exit 3 with one line saying what is missing."""
    try:
        import torch
    except ImportError as e:
        sys.exit("gpu-validate job: PyTorch is not importable (%s)" % e)
    if not torch.cuda.is_available():
        print("gpu-validate job: torch %s sees no CUDA device" % torch.__version__, file=sys.stderr)
        sys.exit(3)
    return torch


class Steps:
    """Prints `step N` lines, as gpuwhy run's default step regex expects, until the deadline."""

    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds
        self.n = 0

    def more(self):
        return time.monotonic() < self.deadline

    def done(self):
        self.n += 1
        print("step %d" % self.n, flush=True)
