#!/usr/bin/env python3
"""Plots benches/scaling/scaling.csv (written by the `scaling` example) to scaling.png."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(here, "scaling.csv"))))
by_sources = [(int(r["sources"]), float(r["frame_ms"])) for r in rows if r["sweep"] == "sources"]
by_res = [(int(r["resolution"]), float(r["frame_ms"])) for r in rows if r["sweep"] == "resolution"]

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
a.loglog(*zip(*by_sources), "o-")
a.set_xlabel("vision sources (radius 32 texels)")
a.set_ylabel("whole frame, ms (CPU, 2 threads)")
a.set_title("TheFrozenSea at 1024 x 1024")
a.grid(True, which="both", alpha=0.3)
b.loglog([r * r for r, _ in by_res], [t for _, t in by_res], "s-", color="tab:orange")
for r, t in by_res:
    b.annotate(f"{r}²", (r * r, t), textcoords="offset points", xytext=(4, -10), fontsize=8)
b.set_xlabel("texels")
b.set_title("1000 sources, resolution 256² to 4096²")
b.grid(True, which="both", alpha=0.3)
fig.suptitle("murk: cost growth of a full recompute (occlusion + visibility + blur + memory + compose)")
fig.tight_layout()
fig.savefig(os.path.join(here, "scaling.png"), dpi=110)
print("wrote", os.path.join(here, "scaling.png"))
