#!/usr/bin/env python3
"""Plot the request rate of a simulated fleet through an outage of its pinning service.

Input: the CSV files of `pinkeeper-bench outage --csv FILE` (minute from the outage's start,
requests in that minute). Each file is one panel, in units of its own steady mean (the minutes
before the outage), with the busiest of those minutes drawn as the noise level. Needs matplotlib
(pip install matplotlib).

Usage: scripts/plot-outage.py OUT.png OUTAGE-HOURS LABEL=FILE.csv [LABEL=FILE.csv ...]
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    minutes, counts = [], []
    with open(path) as f:
        for row in csv.DictReader(f):
            minutes.append(int(row["minute"]))
            counts.append(int(row["requests"]))
    before = [c for m, c in zip(minutes, counts) if m < 0]
    steady = sum(before) / len(before)
    # The steady window's own busiest minute: what noise alone makes of a peak at this rate.
    return minutes, counts, steady, max(before) / steady


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, outage_hours, panels = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    figure, axes = plt.subplots(len(panels), 1, figsize=(10, 2.7 * len(panels)), sharex=True, squeeze=False)
    for axis, panel in zip(axes[:, 0], panels):
        label, path = panel.split("=", 1)
        minutes, counts, steady, noise = read(path)
        shown = [(m / 60, c / steady) for m, c in zip(minutes, counts) if -6 * 60 <= m < (outage_hours + 12) * 60]
        axis.plot([h for h, _ in shown], [r for _, r in shown], linewidth=0.7, color="tab:blue")
        axis.axvspan(0, outage_hours, color="tab:red", alpha=0.12, label="service down")
        axis.axhline(1, color="grey", linewidth=0.6, linestyle=":", label="steady mean (%.0f / min)" % steady)
        axis.axhline(noise, color="grey", linewidth=0.6, linestyle="-.", label="busiest minute before the outage (noise): %.2f" % noise)
        axis.axhline(3, color="tab:red", linewidth=0.6, linestyle="--", label="goal: 3 x steady mean")
        axis.set_title(label, fontsize=10)
        axis.set_ylabel("requests / minute\n(x steady mean)")
        # Room above the goal line for the legend when the curve stays under it.
        axis.set_ylim(0, max(4.2, 1.08 * max(r for _, r in shown)))
        axis.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("hours from the start of the outage")
    figure.tight_layout()
    figure.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
