"""Write a synthetic multi-rank NCCL INFO log of N MB: realistic lines from 16 ranks, interleaved."""
import random
import sys

path, mb = sys.argv[1], int(sys.argv[2])
random.seed(7)
lines = [
    "{h}:{p}:{t} [{r}] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
    "{h}:{p}:{t} [{r}] NCCL INFO NCCL_IB_HCA set to ibp",
    "{h}:{p}:{t} [{r}] NCCL INFO NET/IB : Using [0]ibp0p0:1/RoCE [1]ibp0p1:1/RoCE [2]ibp0p2:1/RoCE [3]ibp0p3:1/RoCE [RO]; OOB eth0:10.0.0.{r}<0>",
    "{h}:{p}:{t} [{r}] NCCL INFO Using network IB",
    "{h}:{p}:{t} [{r}] NCCL INFO Channel {c:02d}/0 : {r}[{r}] -> {n}[{n}] [send] via NET/IB/{c}/GDRDMA",
    "{h}:{p}:{t} [{r}] NCCL INFO Channel {c:02d}/0 : {n}[{n}] -> {r}[{r}] [receive] via NET/IB/{c}/GDRDMA",
    "{h}:{p}:{t} [{r}] NCCL INFO comm 0x55d0c0a0 rank {r} nRanks 16 nNodes 4 localRanks 4 localRank {lr} MNNVL 0",
    "{h}:{p}:{t} [{r}] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
    "application step {c}: loss 0.{p} lr 0.0003",
]
target = mb * 1024 * 1024
written = 0
with open(path, "w") as f:
    buf = []
    while written < target:
        r = random.randrange(16)
        line = random.choice(lines).format(h=f"node-{r // 4}", p=1000 + r, t=2000 + r, r=r, n=(r + 1) % 16,
                                           c=random.randrange(32), lr=r % 4) + "\n"
        buf.append(line)
        written += len(line)
        if len(buf) >= 10000:
            f.write("".join(buf))
            buf = []
    f.write("".join(buf))
