"""Split a synth_log.py log into one file per rank, the way NCCL_DEBUG_FILE=nccl.%h.%p.log writes them
(application lines go to their rank's file too): the input of `roce explain DIR`."""
import os
import re
import sys

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
nccl = re.compile(r"^(node-\d+):(\d+):")
app = re.compile(r"^\[rank (\d+)\]")
files = {}


def file_for(host, pid):
    key = (host, pid)
    if key not in files:
        files[key] = open(os.path.join(out, f"nccl.{host}.{pid}.log"), "w", buffering=1 << 20)
    return files[key]


with open(src) as f:
    for line in f:
        m = nccl.match(line)
        if m:
            file_for(m.group(1), m.group(2)).write(line)
            continue
        m = app.match(line)
        if m:
            r = int(m.group(1))
            file_for(f"node-{r // 8:03d}", str(10000 + r)).write(line)
for f in files.values():
    f.close()
