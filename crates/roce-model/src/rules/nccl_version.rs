//! The NCCL release a profile names (`nccl version="2.28"`): the variables it sets, judged by that release
//! through [`crate::fabric::nccl_versions`] (which release reads each variable, and the defaults that
//! changed, and the value syntaxes it accepts, and the features it has). Without `version` nothing here
//! runs.

use crate::fabric::nccl_versions::NcclRelease;
use crate::fabric::nccl_versions::{self as versions, COVERED, Unread};
use crate::model::Profile;
use crate::problem::{Code, Problem};
use crate::source::Spanned;

use crate::fabric::nccl::strtoll;

/// Check the profile's variables against its NCCL release.
pub(crate) fn check(p: &Profile, out: &mut Vec<Problem>) {
    let Some(release) = &p.nccl.version else {
        return;
    };
    let version = release.value.minor();
    syntax(p, release, out);
    features(p, release, out);
    if !release.value.covered() {
        let (side, judged) = if version < COVERED.0 {
            (
                "older than",
                format!(
                    "which of the profile's variables NCCL {} reads (releases before {} lack some that later ones read)",
                    release.value, COVERED.0
                ),
            )
        } else {
            (
                "newer than",
                format!(
                    "whether NCCL {} still reads each of the profile's variables, or reads ones {} did not",
                    release.value, COVERED.1
                ),
            )
        };
        out.push(
            Problem::new(
                Code::NcclVersionUncovered,
                format!(
                    "NCCL {} is {side} the releases roce has read ({} to {}): check cannot say {judged}",
                    release.value, COVERED.0, COVERED.1
                ),
            )
            .at(release.origin, "not in roce's NCCL table")
            .help(format!(
                "the rest of the profile is checked as usual; for a judgement by release, name the release from {} to {} closest to the one the image ships",
                COVERED.0, COVERED.1
            )),
        );
        return;
    }
    for var in p.env_vars() {
        if !var.name.starts_with("NCCL_") {
            continue;
        }
        if let Some((why, h)) = versions::unread(&var.name, version) {
            let (message, help) = match why {
                Unread::Before(since) => (
                    format!(
                        "{}={} has no effect on NCCL {}, the release this profile names: NCCL reads it from {since} on ({})",
                        var.name, var.value, release.value, h.source
                    ),
                    format!(
                        "leave it out for NCCL {version}, or run NCCL {since} or later and name it in `nccl version`"
                    ),
                ),
                Unread::Removed(removed) => (
                    format!(
                        "{}={} has no effect on NCCL {}, the release this profile names: {why} (first read: {})",
                        var.name, var.value, release.value, h.source
                    ),
                    format!(
                        "remove it: NCCL {removed} and later ignore it without a word, as they ignore every `NCCL_*` they do not know"
                    ),
                ),
                Unread::Never => (
                    format!(
                        "{}={} has no effect on NCCL {}: {why} ({})",
                        var.name, var.value, release.value, h.source
                    ),
                    "remove it unless a plugin the job loads reads it: NCCL ignores every `NCCL_*` it does not know, without a word"
                        .to_string(),
                ),
            };
            let mut problem = Problem::new(Code::NcclVersionUnread, message);
            if let Some(at) = var.origin {
                problem = problem.at(at, format!("NCCL {version} ignores it"));
            }
            out.push(
                problem
                    .at(release.origin, "the release the job runs")
                    .help(help),
            );
            continue;
        }
        let Some((default, source)) = versions::default_of(&var.name, version) else {
            continue;
        };
        let (value, whole) = strtoll(&var.value);
        if !whole || default.parse::<i64>() != Ok(value) {
            continue;
        }
        let Some(d) = versions::DEFAULTS.iter().find(|d| d.name == var.name) else {
            continue;
        };
        let change = if version >= d.since {
            format!(
                "NCCL changed it in {} (it was {}: {})",
                d.since, d.before, d.before_source
            )
        } else {
            format!(
                "NCCL changes it to {} in {} ({})",
                d.after, d.since, d.source
            )
        };
        let mut problem = Problem::new(
            Code::NcclVersionDefault,
            format!(
                "{}={} is NCCL {}'s own default ({source}); {change}",
                var.name, var.value, release.value
            ),
        );
        if let Some(at) = var.origin {
            problem = problem.at(at, format!("NCCL {version}'s default"));
        }
        out.push(
            problem
                .at(release.origin, "the release the job runs")
                .help(format!(
                    "keep it to pin {} across NCCL upgrades, or remove it to follow each release's default",
                    var.value
                )),
        );
    }
}

/// Values in a syntax the release does not accept ([`versions::SYNTAX`]). Judged for every release, covered or
/// not: the table says from which release on a syntax is read, so any older one reads it the old way.
fn syntax(p: &Profile, release: &Spanned<NcclRelease>, out: &mut Vec<Problem>) {
    for var in p.env_vars() {
        for s in versions::SYNTAX.iter().filter(|s| s.name == var.name) {
            if !s.used_in(&var.value) || s.accepted_by(release.value) {
                continue;
            }
            let named = match release.value.patch() {
                Some(_) => format!("NCCL {}", release.value),
                None => format!(
                    "NCCL {} (named without its patch, so possibly older than {})",
                    release.value,
                    s.since_text()
                ),
            };
            let mut problem = Problem::new(
                Code::NcclVersionSyntax,
                format!(
                    "{}={} uses {}, which NCCL reads from {} on ({}); {named} {} ({})",
                    var.name,
                    var.value,
                    s.what,
                    s.since_text(),
                    s.source,
                    s.before,
                    s.before_source
                ),
            );
            if let Some(at) = var.origin {
                problem = problem.at(at, format!("not read this way before {}", s.since_text()));
            }
            out.push(
                problem
                    .at(release.origin, "the release the job runs")
                    .help(format!(
                        "name the release the image runs in `nccl version` if it is {} or later, or write the value in the syntax {named} reads",
                        s.since_text()
                    )),
            );
        }
    }
}

/// Features the profile turns on that the release lacks ([`versions::FEATURES`]). Judged for every release,
/// covered or not, as [`syntax`] is: a release older than the feature's first lacks it.
fn features(p: &Profile, release: &Spanned<NcclRelease>, out: &mut Vec<Problem>) {
    let mut lacking: Vec<&str> = Vec::new();
    for var in p.env_vars() {
        for f in versions::FEATURES.iter().filter(|f| f.name == var.name) {
            if !f.used_in(&var.value) || f.accepted_by(release.value) {
                continue;
            }
            lacking.push(f.name);
            if f.part_of.is_some_and(|whole| lacking.contains(&whole)) {
                continue;
            }
            let named = match (release.value.patch(), f.since.1) {
                (None, Some(_)) => format!(
                    "NCCL {} (named without its patch, so possibly older than {})",
                    release.value,
                    f.since_text()
                ),
                _ => format!("NCCL {}", release.value),
            };
            let mut problem = Problem::new(
                Code::NcclVersionFeature,
                format!(
                    "{}={} turns on {}, which NCCL has from {} on ({}); {named} {} ({})",
                    var.name,
                    var.value,
                    f.what,
                    f.since_text(),
                    f.source,
                    f.before,
                    f.before_source
                ),
            );
            if let Some(at) = var.origin {
                problem = problem.at(at, format!("needs NCCL {} or later", f.since_text()));
            }
            out.push(
                problem
                    .at(release.origin, "the release the job runs")
                    .help(format!(
                        "run NCCL {} or later (and the plugin built from its tree) and name it in `nccl version`, or leave {} off for this release",
                        f.since_text(),
                        f.what
                    )),
            );
        }
    }
}
