//! Fabric rules: RoCE addressing, and RoCE-only settings on InfiniBand.

use crate::fabric::env::{NCCL_IB_ADDR_FAMILY, NCCL_IB_TC};
use crate::model::{FabricKind, Profile};
use crate::problem::{Code, Problem};

/// Check the fabric block.
pub(crate) fn check(p: &Profile, out: &mut Vec<Problem>) {
    let f = &p.fabric;
    match f.kind.value {
        FabricKind::Roce => {
            let mut missing = Vec::new();
            if f.addr_family.is_none() {
                missing.push(("addr-family", NCCL_IB_ADDR_FAMILY.name, "addr-family ipv6"));
            }
            if f.traffic_class.is_none() {
                missing.push(("traffic-class", NCCL_IB_TC.name, "traffic-class 96"));
            }
            for (key, env, example) in missing {
                out.push(
                    Problem::new(
                        Code::RoceAddressing,
                        format!("a RoCE fabric needs `{key}` ({env})"),
                    )
                    .at(f.kind.origin, format!("RoCE fabric without `{key}`"))
                    .help(format!(
                        "add `{example}` to the fabric block (the CoreWeave Spectrum-X values are `addr-family ipv6` and `traffic-class 96`); without it NCCL picks the wrong GIDs or traffic class"
                    )),
                );
            }
        }
        FabricKind::InfiniBand => {
            let set = [
                ("addr-family", f.addr_family.as_ref().map(|s| s.origin)),
                ("addr-range", f.addr_range.as_ref().map(|s| s.origin)),
                ("traffic-class", f.traffic_class.as_ref().map(|s| s.origin)),
                ("gid-index", f.gid_index.as_ref().map(|s| s.origin)),
            ];
            for (key, origin) in set {
                if let Some(origin) = origin {
                    out.push(
                        Problem::new(
                            Code::IbRoceSetting,
                            format!("`{key}` is a RoCE setting; this fabric is InfiniBand"),
                        )
                        .at(origin, "RoCE only")
                        .at(f.kind.origin, "the fabric is InfiniBand")
                        .help(format!(
                            "remove `{key}` (InfiniBand is LID-addressed: NCCL ignores GID family, range and traffic class there), or set `fabric roce` if this is a RoCE cluster"
                        )),
                    );
                }
            }
        }
    }
}
