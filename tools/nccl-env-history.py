#!/usr/bin/env python3
"""Which NCCL releases read each NCCL variable roce knows: writes crates/roce-model/src/fabric/nccl_versions/history.rs.

For every release of NCCL 2.18 to 2.30 (the first public release of each minor, from a clone of
github.com/NVIDIA/nccl), a variable is read when its name appears as a string in `src/` at that release:
`NCCL_PARAM(Name, "IB_HCA", …)` (NCCL prefixes "NCCL_") or `ncclGetEnv("NCCL_IB_HCA")`. The entry cites the
file and line at the first release that has it. 2.31 and 2.32 are not in the public repository: there the
source is the release's own libnccl.so.2 (PyPI nvidia-nccl-cu13), whose string table holds every variable
name it reads. A variable is removed at the first release after one that had it where it is gone.

Usage: tools/nccl-env-history.py NCCL_GIT_DIR WHEEL_LIB_2_31 WHEEL_LIB_2_32 > crates/roce-model/src/fabric/nccl_versions/history.rs
"""
import re, subprocess, sys

git_dir, lib231, lib232 = sys.argv[1:4]

# the variables roce reads, writes or names (profiles, lint, explain); kept here so a change is reviewed
VARS = """NCCL_ALGO NCCL_BUFFSIZE NCCL_COLLNET_ENABLE NCCL_COMM_ID NCCL_CONF_FILE NCCL_CROSS_NIC
NCCL_CUMEM_ENABLE NCCL_DEBUG NCCL_DEBUG_FILE NCCL_DEBUG_SUBSYS NCCL_DMABUF_ENABLE NCCL_ENV_PLUGIN
NCCL_GRAPH_DUMP_FILE NCCL_GRAPH_FILE NCCL_HOSTID NCCL_IB_ADAPTIVE_ROUTING NCCL_IB_ADDR_FAMILY NCCL_IB_ADDR_RANGE
NCCL_IB_DATA_DIRECT NCCL_IB_DISABLE NCCL_IB_FIFO_TC NCCL_IB_GID_INDEX NCCL_IB_HCA NCCL_IB_PCI_RELAXED_ORDERING
NCCL_IB_QPS_PER_CONNECTION NCCL_IB_ROCE_VERSION_NUM NCCL_IB_SL NCCL_IB_SPLIT_DATA_ON_QPS NCCL_IB_TC
NCCL_IB_TIMEOUT NCCL_IGNORE_CPU_AFFINITY NCCL_LAUNCH_MODE NCCL_MNNVL_ENABLE NCCL_NET NCCL_NET_GDR_C2C
NCCL_NET_GDR_LEVEL NCCL_NET_PLUGIN NCCL_NVLS_CHUNKSIZE NCCL_NVLS_ENABLE NCCL_NVLS_NCHANNELS
NCCL_NVLSTREE_MAX_CHUNKSIZE NCCL_OOB_NET_IFNAME NCCL_P2P_DISABLE NCCL_P2P_LEVEL NCCL_P2P_NET_CHUNKSIZE
NCCL_PROFILER_PLUGIN NCCL_PROTO NCCL_SHM_DISABLE NCCL_SHM_USE_CUDA_MEMCPY NCCL_SOCKET_FAMILY
NCCL_SOCKET_IFNAME NCCL_TOPO_DUMP_FILE NCCL_TOPO_FILE NCCL_TUNER_CONFIG_PATH NCCL_TUNER_PLUGIN
NCCL_IB_SUBNET_AWARE_ROUTING NCCL_IB_DEVICE_PCI_ORDER NCCL_RUN_DIAGNOSTICS NCCL_MULTI_RANK_GPU_ENABLE
NCCL_IB_NET_LATENCY NCCL_MAX_CTAS NCCL_RAS_ENABLE NCCL_NSOCKS_PERTHREAD NCCL_SOCKET_NTHREADS NCCL_MAX_NCHANNELS NCCL_MIN_NCHANNELS
NCCL_IB_MERGE_NICS NCCL_IB_RETRY_CNT NCCL_NET_SHARED_BUFFERS NCCL_IB_ECE_ENABLE""".split()

# variables that plugins read, not NCCL, with where that is seen
PLUGIN_VARS = {
    "NCCL_TUNER_CONFIG_PATH": "read by Google's tuner plugin (libnccl-tuner.so of gIB and TCPXO, beside "
    "NCCL_TUNER_PLUGIN in Google Cloud's A3 Ultra and A3 Mega samples), not by NCCL",
}

def git(*args):
    return subprocess.run(["git", "-C", git_dir, *args], capture_output=True, text=True).stdout

# the first public release of each minor, in order
releases = []
seen = set()
for line in reversed(git("log", "--format=%h %s").splitlines()):
    m = re.search(r" (?:NCCL )?(2\.(\d+)\.(\d+))-1$", line)
    if not m or int(m.group(2)) < 18:
        continue
    minor = int(m.group(2))
    if minor in seen:
        continue
    seen.add(minor)
    releases.append((minor, m.group(1), line.split()[0]))
releases.sort()

def in_source(commit, var, where="src"):
    """`path:line` of the first place NCCL reads `var` at `commit`: the full name as a string
    (`ncclGetEnv("NCCL_NET")`), else an `NCCL_PARAM(Name, "SHORT", …)` (bare short names such as "NET" are
    also debug subsystem names, so they only count inside NCCL_PARAM)."""
    short = var[len("NCCL_"):]
    for args in (["-F", "-e", f'"{var}"'], ["-E", "-e", rf'NCCL_PARAM\(\w+, *"{short}"']):
        out = git("grep", "-n", *args, commit, "--", where)
        for hit in out.splitlines():
            _, path, line = hit.split(":", 3)[:3]
            return f"{path}:{line}"
    return None

def in_lib(path):
    out = subprocess.run(["strings", "-n", "6", path], capture_output=True, text=True).stdout
    return set(re.findall(r"^NCCL_[A-Z0-9_]+$", out, re.M))

libs = [(31, "2.31.2", in_lib(lib231)), (32, "2.32.3", in_lib(lib232))]

rows = []
for var in sorted(set(VARS)):
    have = []  # (minor, version, source or None)
    for minor, version, commit in releases:
        at = in_source(commit, var)
        have.append((minor, version, f"NVIDIA/nccl {version}-1 ({commit}) {at}" if at else None))
    for minor, version, names in libs:
        have.append((minor, version, f"libnccl.so.2 of nvidia-nccl-cu13 {version} (its string table)" if var in names else None))
    since = next((h for h in have if h[2]), None)
    if since is None:
        minor, version, commit = releases[-1]
        plugin = in_source(commit, var, ".")
        why = PLUGIN_VARS.get(var) or (
            f"read by a plugin, not by NCCL: NVIDIA/nccl {version}-1 ({commit}) {plugin}" if plugin
            else "in no release from 2.18 to 2.32: not a variable NCCL reads")
        rows.append((var, None, None, why))
        continue
    removed = None
    after = have[have.index(since):]
    for h in after:
        if h[2] is None:
            removed = h
            break
    rows.append((var, since[0], removed[0] if removed else None, since[2]))

print("// Generated by tools/nccl-env-history.py; do not edit. Sources: github.com/NVIDIA/nccl release commits")
print("// (2.18 to 2.30) and the string tables of PyPI nvidia-nccl-cu13 2.31.2 and 2.32.3's libnccl.so.2.")
print()
print("use super::{VarHistory, v};")
print()
print("/// Every NCCL variable roce knows, with the first NCCL minor (2.18 or later) that reads it and the first")
print("/// that no longer does; `since: None` for a name no release reads.")
print("#[rustfmt::skip]")
print("pub const HISTORY: &[VarHistory] = &[")
for var, since, removed, source in rows:
    s = f"Some(v({since}))" if since is not None else "None"
    r = f"Some(v({removed}))" if removed is not None else "None"
    print(f"    VarHistory {{ name: \"{var}\", since: {s}, removed: {r}, source: \"{source}\" }},")
print("];")
