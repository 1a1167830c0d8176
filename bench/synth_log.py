"""Write a synthetic multi-rank NCCL INFO log of N MB, shaped like a real job's: 512 ranks on 64 hosts,
each printing its init block (version, env echoes, NET/IB devices, network choice) when a communicator
is created, then channel/connection lines and application output, all interleaved."""
import random
import sys

path, mb = sys.argv[1], int(sys.argv[2])
random.seed(7)
RANKS = 512
init = [
    "{h}:{p}:{t} [{d}] NCCL INFO NCCL version 2.28.9+cuda13.0",
    "{h}:{p}:{t} [{d}] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
    "{h}:{p}:{t} [{d}] NCCL INFO NCCL_IB_HCA set to ibp",
    "{h}:{p}:{t} [{d}] NCCL INFO NCCL_IB_TC set by environment to 96.",
    "{h}:{p}:{t} [{d}] NCCL INFO NET/IB : Using [0]ibp0p0:1/RoCE [1]ibp0p1:1/RoCE [2]ibp0p2:1/RoCE [3]ibp0p3:1/RoCE [RO]; OOB eth0:10.0.0.{d}<0>",
    "{h}:{p}:{t} [{d}] NCCL INFO Using network IB",
    "{h}:{p}:{t} [{d}] NCCL INFO comm 0x55d0c0a0 rank {r} nRanks {n} nNodes 64 localRanks 8 localRank {d} MNNVL 0",
]
bulk = [
    "{h}:{p}:{t} [{d}] NCCL INFO Channel {c:02d}/0 : {r}[{d}] -> {x}[{d}] [send] via NET/IB/{c4}/GDRDMA",
    "{h}:{p}:{t} [{d}] NCCL INFO Channel {c:02d}/0 : {x}[{d}] -> {r}[{d}] [receive] via NET/IB/{c4}/GDRDMA",
    "{h}:{p}:{t} [{d}] NCCL INFO Channel {c:02d}/1 : {r}[{d}] -> {x}[{d}] via P2P/CUMEM/read",
    "[rank {r}] step {c}: loss 2.{p} grad_norm 0.{t} lr 3.0e-04 tokens/s 81234",
]
target = mb * 1024 * 1024
written = 0
with open(path, "w") as f:
    buf = []
    while written < target:
        r = random.randrange(RANKS)
        fields = dict(h=f"node-{r // 8:03d}", p=10000 + r, t=20000 + r, d=r % 8, r=r, n=RANKS,
                      x=(r + 8) % RANKS, c=random.randrange(32), c4=random.randrange(4))
        # about one line in 60 belongs to a communicator's init block
        line = random.choice(init if random.random() < 1 / 60 else bulk).format(**fields) + "\n"
        buf.append(line)
        written += len(line)
        if len(buf) >= 10000:
            f.write("".join(buf))
            buf = []
    f.write("".join(buf))
