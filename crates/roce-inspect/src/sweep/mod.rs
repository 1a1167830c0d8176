//! `roce sweep report`: which nodes and links of a fleet are bad, and why, from a campaign's results.
//!
//! Every test's output is read by `explain` ([`read`]), which says what the log shows and on which host:
//! socket fallback, GPUDirect RDMA off, a rail short, a GID problem, a net plugin not loaded, multi-node
//! NVLink not working. Then the fleet is judged ([`judge`]):
//!
//! - a cause the logs show on more than half of the tested nodes ([`FLEET_WIDE`]) is the fleet's, not a
//!   node's: the profile or the fabric is wrong everywhere (no RDMA device in any pod, a plugin missing from
//!   the image), so draining every node would be the wrong advice. The fleet is below expectation for it,
//!   and the nodes are judged against each other as if its tests were clean;
//! - the *reference* is the median bus bandwidth of the pairs that show no fault; a pair more than
//!   [`SLOW`] below it is slow. When the profile gives an expectation (`job expected-busbw`, or the line
//!   rate of its rails) and the reference is under [`FLEET_LOW`] of it, the whole fleet is below
//!   expectation: a profile or fabric problem, not a node's;
//! - a node is **bad** when its own ranks show a fault (the log pins it on that host), or when every test
//!   it took part in went wrong, with at least `partners` of them and none explained by a bad partner;
//! - a test that went wrong and that no bad node explains is a **bad link** (slow, failed, hung, link
//!   errors), unless one of its nodes has several such tests: that node is **suspect** (re-test it);
//! - a node with no test that says anything about it (missing results, only bad partners) is **untested**.
//!
//! `roce doctor --format json` from a node (beside its check, [`Check::doctor`]) is read as part of the
//! check: a fault it shows (no RDMA device, a rail or port missing, no usable GID, no peer memory, no
//! IMEX channel, the net plugin missing) is pinned on that node like a fault its own log shows.
//!
//! [`Check::doctor`]: roce_render::sweep::Check::doctor

mod html;
pub mod read;

use indexmap::{IndexMap, IndexSet};
use roce_render::sweep::{Campaign, NodeName};
use serde::Serialize;

pub use html::to_html;
pub use read::{State, TestResult};

/// The `schema` field of the JSON report.
pub const REPORT_SCHEMA: &str = "roce.dev/sweep-report/v1";

/// A pair under this fraction of the reference is slow: the ±5 % run-to-run noise of a healthy fabric
/// stays above it, a missing rail of 8 (−12.5 %) mostly below (and the log says so anyway).
pub const SLOW: f64 = 0.9;

/// A fleet whose reference is under this fraction of the profile's expectation is below expectation.
pub const FLEET_LOW: f64 = 0.8;

/// A cause shown on more than this fraction of the tested nodes is the fleet's.
pub const FLEET_WIDE: f64 = 0.5;

/// Why a node or link is bad: stable codes (`snake_case` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// NCCL used TCP sockets instead of RDMA (no RDMA device in the pod or on the node).
    SocketFallback,
    /// GPUDirect RDMA off: data goes through host memory.
    GdrOff,
    /// A node's ranks listed fewer RDMA ports than the profile's rails (or than their peers'):
    /// busbw ≈ (R−1)/R.
    RailMissing,
    /// A RoCE GID problem (link-local GID, unreadable GID type): connections fail or cannot be routed.
    Gid,
    /// The profile's net plugin was not loaded.
    PluginNotLoaded,
    /// NVLink or multi-node NVLink (IMEX) not working: a slow single-node check, or NCCL's MNNVL error.
    Nvlink,
    /// RDMA completion errors or retries exceeded on the link.
    LinkErrors,
    /// nccl-tests counted wrong results.
    WrongResults,
    /// The test outlived its time limit.
    Hung,
    /// The test failed without a cause the log names.
    Failed,
    /// Slower than the fleet, and the log names no cause.
    Slow,
}

impl Cause {
    /// The JSON code.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::SocketFallback => "socket_fallback",
            Cause::GdrOff => "gdr_off",
            Cause::RailMissing => "rail_missing",
            Cause::Gid => "gid",
            Cause::PluginNotLoaded => "plugin_not_loaded",
            Cause::Nvlink => "nvlink",
            Cause::LinkErrors => "link_errors",
            Cause::WrongResults => "wrong_results",
            Cause::Hung => "hung",
            Cause::Failed => "failed",
            Cause::Slow => "slow",
        }
    }

    /// What to do about it.
    pub fn fix(self) -> &'static str {
        match self {
            Cause::SocketFallback => {
                "the node's pods get no RDMA device: check the RDMA device plugin / NIC driver on the node (`ibv_devinfo`), and `roce doctor` in a pod there"
            }
            Cause::GdrOff => {
                "load nvidia-peermem (or use DMA-BUF: kernel ≥ 5.12 and open GPU driver) on the node; `roce doctor` says which"
            }
            Cause::RailMissing => {
                "a NIC or port is down or missing on the node: `ibv_devinfo` / `ip link`, then the cable, transceiver and switch port"
            }
            Cause::Gid => {
                "the node's RoCE GID table lacks the routable GID (IPv4-mapped or global IPv6) at the profile's index: check the interface's address and `show_gids`"
            }
            Cause::PluginNotLoaded => {
                "the net plugin library is missing from the node's image or LD_LIBRARY_PATH"
            }
            Cause::Nvlink => {
                "NVLink is degraded: check `nvidia-smi nvlink -s`, Fabric Manager / IMEX on the node"
            }
            Cause::LinkErrors => {
                "the link drops packets: check port counters (symbol errors, link downed) and the cable on both ends"
            }
            Cause::WrongResults => {
                "a GPU or NIC corrupts data: drain the node(s) and run the vendor's diagnostics"
            }
            Cause::Hung => {
                "the test never finished: check the nodes' logs around the time limit; re-run the pair"
            }
            Cause::Failed => "the test failed: read its output",
            Cause::Slow => {
                "slower than the fleet without a cause in the log: re-run, then compare `roce doctor` on both nodes"
            }
        }
    }
}

/// A node's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Its tests are fine.
    Ok,
    /// Bad: drain it.
    Bad,
    /// Several of its tests went wrong, not all: re-test it.
    Suspect,
    /// Nothing says anything about it.
    Untested,
}

/// One node in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeReport {
    /// The node.
    pub name: NodeName,
    /// Its verdict.
    pub verdict: Verdict,
    /// Why, when not ok.
    pub cause: Option<Cause>,
    /// Its single-node check's bus bandwidth (GB/s).
    pub check_busbw: Option<f64>,
    /// The median bus bandwidth of its pair tests (GB/s).
    pub pair_busbw: Option<f64>,
    /// Pair tests it took part in.
    pub tests: u32,
    /// Of those, the ones that went wrong.
    pub bad_tests: u32,
    /// The line that shows the cause.
    pub evidence: Option<String>,
    /// Why it is excluded or untested.
    pub note: Option<String>,
}

/// A bad link: a test that went wrong and that no bad node explains.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkReport {
    /// The two nodes.
    pub nodes: [NodeName; 2],
    /// Why.
    pub cause: Cause,
    /// Its bus bandwidth (GB/s), when it measured one.
    pub busbw: Option<f64>,
    /// Its output, relative to the results directory.
    pub output: String,
    /// The line that shows the cause.
    pub evidence: Option<String>,
}

/// The fleet as a whole.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// `ok` or `below_expectation`.
    pub verdict: &'static str,
    /// The median bus bandwidth of the pairs that show no fault (GB/s).
    pub reference_busbw: Option<f64>,
    /// The profile's expectation (GB/s).
    pub expected_busbw: Option<f64>,
    /// Where it comes from.
    pub expected_from: Option<String>,
    /// The reference as a percentage of the expectation.
    pub percent: Option<f64>,
    /// The fleet-wide cause ([`FLEET_WIDE`]), else the most common cause the pairs' logs show, when the
    /// fleet is below expectation.
    pub cause: Option<Cause>,
    /// A line that shows the fleet-wide cause.
    pub evidence: Option<String>,
}

/// Counts, for the summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Nodes in the campaign (tested and excluded).
    pub nodes: u32,
    /// By verdict.
    pub ok: u32,
    /// Bad nodes.
    pub bad: u32,
    /// Suspect nodes.
    pub suspect: u32,
    /// Untested nodes (excluded ones included).
    pub untested: u32,
    /// Bad links.
    pub bad_links: u32,
    /// Tests planned.
    pub tests: u32,
    /// Tests whose output was not found.
    pub missing: u32,
}

/// What to do next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Retest {
    /// Bad nodes: take them out of service.
    pub drain: Vec<NodeName>,
    /// Suspect and untested nodes, and the nodes of bad links: run them again.
    pub rerun: Vec<NodeName>,
}

/// The report (`roce sweep report --format json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// The campaign's profile.
    pub profile: String,
    /// The fleet.
    pub fleet: Fleet,
    /// Counts.
    pub counts: Counts,
    /// Every node, bad first.
    pub nodes: Vec<NodeReport>,
    /// Bad links.
    pub links: Vec<LinkReport>,
    /// Next steps.
    pub retest: Retest,
    /// Every test, in campaign order (not in the JSON unless asked for; the HTML heatmap uses them).
    #[serde(skip)]
    pub tests: Vec<TestResult>,
}

/// What the fleet is expected to do: from the profile (`job expected-busbw`, else its rails' line rate).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expectation {
    /// Pair all_reduce bus bandwidth (GB/s).
    pub busbw: Option<f64>,
    /// Where it comes from.
    pub from: Option<String>,
    /// RDMA ports per node.
    pub rails: Option<u32>,
}

impl Expectation {
    /// The expectation of a profile for a two-node all_reduce.
    pub fn of(profile: &roce_model::Profile) -> Expectation {
        use roce_model::fabric::bandwidth::Collective;
        let rails = profile
            .line_rate()
            .map(|r| r.rails)
            .or(Some(profile.rails.nics.value * profile.rails.ports.value));
        if let Some(n) = profile.job.expected_busbw.as_ref() {
            return Expectation {
                busbw: Some(f64::from(n.value)),
                from: Some("the profile's job expected-busbw".into()),
                rails,
            };
        }
        let gpus = profile.node_pool.gpus_per_node.value;
        match profile.line_rate() {
            Some(r) => Expectation {
                busbw: r.busbw(Collective::AllReduce, gpus, Some(2)),
                from: Some(format!(
                    "line rate of the profile's rails: {} x {} Gb/s",
                    r.rails, r.gbps
                )),
                rails,
            },
            None => Expectation {
                rails,
                ..Expectation::default()
            },
        }
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// Read every test of a campaign (checks, then pairs, as [`Campaign::outputs`] lists them), in parallel.
/// `load` gives a test's output by its path relative to the results directory (`None`: missing); the
/// caller does the IO.
pub fn read_all<F>(campaign: &Campaign, expect: &Expectation, load: F) -> Vec<TestResult>
where
    F: Fn(&str) -> Option<Vec<u8>> + Sync,
{
    use rayon::prelude::*;
    let outputs: Vec<(&str, &[NodeName])> = campaign.outputs().collect();
    let n_checks = campaign.checks.len();
    let mut tests: Vec<TestResult> = outputs
        .par_iter()
        .enumerate()
        .map(|(i, (path, nodes))| {
            let bytes = load(path);
            let mut t = read::read(path, nodes, bytes.as_deref(), expect.rails);
            // only a single-node check runs the rail check
            if i < n_checks
                && let Some(b) = &bytes
            {
                t.rails = read::rail_results(b);
            }
            t
        })
        .collect();
    // what `roce doctor` saw on a node is its check's cause where the check's log shows none
    for (t, check) in tests.iter_mut().zip(&campaign.checks) {
        let Some(path) = check.doctor.as_deref() else {
            continue;
        };
        if t.cause
            .is_some_and(|c| !matches!(c, Cause::Failed | Cause::Hung))
        {
            continue;
        }
        if let Some((cause, line)) = load(path).and_then(|json| read::doctor(path, &json)) {
            t.cause = Some(cause);
            t.evidence = Some(line);
            t.evidence_on = Some(check.node.clone());
        }
    }
    tests
}

/// Did this test go wrong, given the reference and the fleet-wide cause? Its cause when it did.
fn wrong(t: &TestResult, reference: Option<f64>, fleet: Option<Cause>) -> Option<Cause> {
    if let Some(c) = own_cause(t, fleet) {
        return Some(c);
    }
    match (t.state, t.busbw, reference) {
        (State::Missing, ..) => None,
        (State::Hung, ..) => Some(Cause::Hung),
        (State::Failed, ..) => Some(Cause::Failed),
        (State::Measured, Some(b), Some(r)) if b < SLOW * r => Some(Cause::Slow),
        _ => None,
    }
}

/// What shows that test `t` went wrong with `cause`: the log's line, or for a slow test its number
/// beside the reference (the log's line then shows something else, e.g. the fleet-wide cause).
fn shown_by(
    t: &TestResult,
    cause: Cause,
    reference: Option<f64>,
    fleet: Option<Cause>,
) -> Option<String> {
    match (cause, t.busbw, reference) {
        (Cause::Slow, Some(b), Some(r)) if own_cause(t, fleet).is_none() => Some(format!(
            "{}: busbw {b:.2} GB/s, {:.0} % of the fleet's reference {r:.2} GB/s",
            t.output,
            100.0 * b / r
        )),
        _ => t.evidence.clone(),
    }
}

/// The rails of a node's rail check that failed or ran under [`SLOW`] of the fleet's rails, as one
/// evidence line; `None` when every rail is fine.
fn bad_rails(t: &TestResult, reference: Option<f64>) -> Option<String> {
    let bad: Vec<String> = t
        .rails
        .iter()
        .filter_map(|r| match (r.gbps, reference) {
            (None, _) => Some(format!("{} failed (line {})", r.rail, r.line)),
            (Some(g), Some(x)) if g < SLOW * x => Some(format!(
                "{} {g:.1} Gb/s, {:.0} % of the fleet's {x:.1} (line {})",
                r.rail,
                100.0 * g / x,
                r.line
            )),
            _ => None,
        })
        .collect();
    (!bad.is_empty()).then(|| format!("{}: rail check: {}", t.output, bad.join("; ")))
}

/// The cause a test's log shows, unless it is the fleet's.
fn own_cause(t: &TestResult, fleet: Option<Cause>) -> Option<Cause> {
    t.cause.filter(|c| Some(*c) != fleet)
}

/// A cause the logs show on more than [`FLEET_WIDE`] of the nodes that took a test, with a line that
/// shows it. Hung, failed and wrong results are each test's own: a fleet where most tests hang is
/// reported test by test.
fn fleet_wide(campaign: &Campaign, tests: &[TestResult]) -> Option<(Cause, Option<String>)> {
    let mut tested: IndexSet<&NodeName> = IndexSet::new();
    let mut shown: IndexMap<Cause, (IndexSet<&NodeName>, Option<String>)> = IndexMap::new();
    for t in tests.iter().filter(|t| t.state != State::Missing) {
        tested.extend(&t.nodes);
        let Some(c) = t.cause else { continue };
        if matches!(c, Cause::Hung | Cause::Failed | Cause::WrongResults) {
            continue;
        }
        let e = shown.entry(c).or_default();
        e.0.extend(if t.blame.is_empty() {
            &t.nodes
        } else {
            &t.blame
        });
        if e.1.is_none() {
            e.1.clone_from(&t.evidence);
        }
    }
    let floor = FLEET_WIDE * tested.len().max(campaign.partners as usize + 1) as f64;
    shown
        .into_iter()
        .filter(|(_, (nodes, _))| nodes.len() as f64 > floor)
        .max_by(|(ca, (a, _)), (cb, (b, _))| a.len().cmp(&b.len()).then(cb.cmp(ca)))
        .map(|(c, (_, ev))| (c, ev))
}

/// Judge the fleet from every test's result (`checks` then pairs, as [`Campaign::outputs`] lists them).
///
/// ```
/// use roce_inspect::sweep::{self, Expectation};
/// use roce_model::{builtin, load, BuiltinsOnly};
/// use roce_render::sweep::{Campaign, NodeList, SweepOptions};
/// use roce_render::{plan, RenderOptions};
/// let profile = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
/// let nodes = NodeList::parse("gpu[001-004]").unwrap();
/// let campaign =
///     Campaign::plan(&plan::lower(&profile), &nodes, &SweepOptions::default(), &RenderOptions::default())
///         .unwrap();
/// let expect = Expectation::of(&profile);
/// // No result has come back yet: every node is untested.
/// let tests = sweep::read_all(&campaign, &expect, |_path| None);
/// let report = sweep::judge(&campaign, tests, &expect);
/// assert_eq!((report.counts.nodes, report.counts.untested), (4, 4));
/// assert!(report.to_text().contains("gpu001"));
/// ```
pub fn judge(campaign: &Campaign, tests: Vec<TestResult>, expect: &Expectation) -> Report {
    let n_checks = campaign.checks.len().min(tests.len());
    let wide = fleet_wide(campaign, &tests);
    let (checks, pairs) = tests.split_at(n_checks);
    let mut j = Judging::new(campaign, checks, pairs, wide.as_ref().map(|(c, _)| *c));
    j.pin_what_the_logs_show();
    j.bad_by_their_tests();
    let (links, unexplained) = j.bad_links();
    let nodes = j.node_reports(&links, &unexplained);
    let fleet = j.fleet(expect, wide.and_then(|(_, ev)| ev));
    let count = |v: Verdict| nodes.iter().filter(|r| r.verdict == v).count() as u32;
    let counts = Counts {
        nodes: nodes.len() as u32,
        ok: count(Verdict::Ok),
        bad: count(Verdict::Bad),
        suspect: count(Verdict::Suspect),
        untested: count(Verdict::Untested),
        bad_links: links.len() as u32,
        tests: tests.len() as u32,
        missing: tests.iter().filter(|t| t.state == State::Missing).count() as u32,
    };
    let retest = retest(&nodes, &links);
    Report {
        schema: REPORT_SCHEMA,
        profile: campaign.profile.clone(),
        fleet,
        counts,
        nodes,
        links,
        retest,
        tests,
    }
}

/// The state of [`judge`], node by node (indices into `campaign.nodes`) and pair by pair.
struct Judging<'a> {
    campaign: &'a Campaign,
    checks: &'a [TestResult],
    pairs: &'a [TestResult],
    index: IndexMap<&'a NodeName, usize>,
    fleet_cause: Option<Cause>,
    /// The median of the pairs without a fault of their own.
    reference: Option<f64>,
    check_reference: Option<f64>,
    /// The median of every rail of every node's rail check (Gb/s).
    rail_reference: Option<f64>,
    verdict: Vec<Verdict>,
    cause: Vec<Option<Cause>>,
    evidence: Vec<Option<String>>,
    /// Each node's pair tests.
    of_node: Vec<Vec<usize>>,
    /// Each pair test's cause, when it went wrong.
    went_wrong: Vec<Option<Cause>>,
}

impl<'a> Judging<'a> {
    fn new(
        campaign: &'a Campaign,
        checks: &'a [TestResult],
        pairs: &'a [TestResult],
        fleet_cause: Option<Cause>,
    ) -> Self {
        let clean =
            |t: &&TestResult| t.state == State::Measured && own_cause(t, fleet_cause).is_none();
        let reference = median(pairs.iter().filter(clean).filter_map(|t| t.busbw).collect());
        let check_reference = median(
            checks
                .iter()
                .filter(clean)
                .filter_map(|t| t.busbw)
                .collect(),
        );
        let rail_reference = median(
            checks
                .iter()
                .flat_map(|t| t.rails.iter().filter_map(|r| r.gbps))
                .collect(),
        );
        let index: IndexMap<&NodeName, usize> = campaign
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n, i))
            .collect();
        let n = campaign.nodes.len();
        let mut of_node: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut went_wrong = Vec::with_capacity(pairs.len());
        for (ti, t) in pairs.iter().enumerate() {
            went_wrong.push(wrong(t, reference, fleet_cause));
            for node in &t.nodes {
                if let Some(&i) = index.get(node) {
                    of_node[i].push(ti);
                }
            }
        }
        Judging {
            campaign,
            checks,
            pairs,
            index,
            fleet_cause,
            reference,
            check_reference,
            rail_reference,
            verdict: vec![Verdict::Ok; n],
            cause: vec![None; n],
            evidence: vec![None; n],
            of_node,
            went_wrong,
        }
    }

    /// A node is bad when its check, its doctor output, or its own ranks in a pair's log show a fault.
    fn pin_what_the_logs_show(&mut self) {
        let mut pinned: Vec<Vec<Pin>> = vec![Vec::new(); self.campaign.nodes.len()];
        for t in self.checks {
            let cause =
                own_cause(t, self.fleet_cause).or(match (t.state, t.busbw, self.check_reference) {
                    (State::Measured, Some(b), Some(r)) if b < SLOW * r => Some(Cause::Nvlink),
                    (State::Hung, ..) => Some(Cause::Hung),
                    (State::Failed, ..) => Some(Cause::Failed),
                    _ => None,
                });
            let Some(&i) = t.nodes.first().and_then(|n| self.index.get(n)) else {
                continue;
            };
            if let Some(c) = cause {
                pinned[i].push(Pin::new(c, t, &self.campaign.nodes[i]));
            }
            if let Some(ev) = bad_rails(t, self.rail_reference) {
                pinned[i].push(Pin {
                    cause: Cause::RailMissing,
                    evidence: Some(ev),
                    own: true,
                });
            }
        }
        for t in self.pairs {
            if let Some(c) = own_cause(t, self.fleet_cause) {
                for b in &t.blame {
                    if let Some(&i) = self.index.get(b) {
                        pinned[i].push(Pin::new(c, t, b));
                    }
                }
            }
        }
        for (i, pins) in pinned.iter().enumerate() {
            if let Some((c, ev)) = most_common(pins) {
                self.verdict[i] = Verdict::Bad;
                self.cause[i] = Some(c);
                self.evidence[i] = ev;
            }
        }
    }

    /// Is pair test `ti` explained by one of its nodes being bad?
    fn explained(&self, ti: usize) -> bool {
        self.pairs[ti].nodes.iter().any(|nd| {
            self.index
                .get(nd)
                .is_some_and(|&i| self.verdict[i] == Verdict::Bad)
        })
    }

    /// Nodes whose every informative test went wrong (at least `partners` of them), strongest first,
    /// each explaining its tests away before the next is chosen.
    fn bad_by_their_tests(&mut self) {
        loop {
            let mut best: Option<(usize, usize)> = None;
            for i in 0..self.campaign.nodes.len() {
                if self.verdict[i] != Verdict::Ok {
                    continue;
                }
                let informative: Vec<usize> = self.of_node[i]
                    .iter()
                    .copied()
                    .filter(|&ti| self.pairs[ti].state != State::Missing && !self.explained(ti))
                    .collect();
                let bad = informative
                    .iter()
                    .filter(|&&ti| self.went_wrong[ti].is_some())
                    .count();
                if bad == informative.len()
                    && bad >= self.campaign.partners as usize
                    && best.is_none_or(|(_, b)| bad > b)
                {
                    best = Some((i, bad));
                }
            }
            let Some((i, _)) = best else { break };
            self.verdict[i] = Verdict::Bad;
            let causes: Vec<Pin> = self.of_node[i]
                .iter()
                .filter_map(|&ti| {
                    let t = &self.pairs[ti];
                    self.went_wrong[ti].map(|c| {
                        let mut pin = Pin::new(c, t, &self.campaign.nodes[i]);
                        pin.evidence = shown_by(t, c, self.reference, self.fleet_cause);
                        pin
                    })
                })
                .collect();
            let (c, ev) = most_common(&causes).unwrap_or((Cause::Slow, None));
            self.cause[i] = Some(c);
            self.evidence[i] = ev;
        }
    }

    /// The tests that went wrong and that no bad node explains, and how many of them each node has.
    fn bad_links(&self) -> (Vec<LinkReport>, Vec<u32>) {
        let mut links = Vec::new();
        let mut unexplained = vec![0u32; self.campaign.nodes.len()];
        for (ti, t) in self.pairs.iter().enumerate() {
            let Some(c) = self.went_wrong[ti] else {
                continue;
            };
            if self.explained(ti) || t.nodes.len() != 2 {
                continue;
            }
            for node in &t.nodes {
                if let Some(&i) = self.index.get(node) {
                    unexplained[i] += 1;
                }
            }
            links.push(LinkReport {
                nodes: [t.nodes[0].clone(), t.nodes[1].clone()],
                cause: c,
                busbw: t.busbw,
                output: t.output.clone(),
                evidence: shown_by(t, c, self.reference, self.fleet_cause),
            });
        }
        (links, unexplained)
    }

    /// Every node's report, bad first: suspect where two or more bad links are its own, untested where
    /// nothing says anything about it; then the nodes the campaign left out.
    fn node_reports(&mut self, links: &[LinkReport], unexplained: &[u32]) -> Vec<NodeReport> {
        let campaign = self.campaign;
        let mut nodes = Vec::with_capacity(campaign.nodes.len() + campaign.excluded.len());
        for (i, name) in campaign.nodes.iter().enumerate() {
            let mine = &self.of_node[i];
            let informative = mine
                .iter()
                .filter(|&&ti| {
                    self.pairs[ti].state != State::Missing
                        && !explained_by_other(i, &self.pairs[ti], &self.index, &self.verdict)
                })
                .count();
            if self.verdict[i] == Verdict::Ok {
                if unexplained[i] >= 2 {
                    self.verdict[i] = Verdict::Suspect;
                    self.cause[i] = Some(
                        links
                            .iter()
                            .find(|l| l.nodes.contains(name))
                            .map_or(Cause::Slow, |l| l.cause),
                    );
                } else if informative == 0
                    && self.checks.get(i).is_none_or(|c| c.state == State::Missing)
                {
                    self.verdict[i] = Verdict::Untested;
                }
            }
            nodes.push(NodeReport {
                name: name.clone(),
                verdict: self.verdict[i],
                cause: self.cause[i],
                check_busbw: self.checks.get(i).and_then(|c| c.busbw),
                pair_busbw: median(mine.iter().filter_map(|&ti| self.pairs[ti].busbw).collect()),
                tests: mine.len() as u32,
                bad_tests: mine.iter().filter(|&&ti| self.went_wrong[ti].is_some()).count() as u32,
                evidence: self.evidence[i].clone(),
                note: (self.verdict[i] == Verdict::Untested)
                    .then(|| "no test that says anything about this node: its results are missing, or all its partners were bad".to_string()),
            });
        }
        for (name, why) in &campaign.excluded {
            nodes.push(NodeReport {
                name: name.clone(),
                verdict: Verdict::Untested,
                cause: None,
                check_busbw: None,
                pair_busbw: None,
                tests: 0,
                bad_tests: 0,
                evidence: None,
                note: Some(format!("not in the campaign: {why}")),
            });
        }
        let rank = |v: Verdict| match v {
            Verdict::Bad => 0,
            Verdict::Suspect => 1,
            Verdict::Untested => 2,
            Verdict::Ok => 3,
        };
        nodes.sort_by_key(|r| rank(r.verdict));
        nodes
    }

    /// The fleet against the profile's expectation, and its fleet-wide cause.
    fn fleet(&self, expect: &Expectation, evidence: Option<String>) -> Fleet {
        let percent = match (self.reference, expect.busbw) {
            (Some(r), Some(x)) if x > 0.0 => Some(100.0 * r / x),
            _ => None,
        };
        let below = self.fleet_cause.is_some() || percent.is_some_and(|p| p < FLEET_LOW * 100.0);
        let most_shown = || {
            let shown: Vec<Pin> = self
                .pairs
                .iter()
                .filter_map(|t| t.cause.map(|c| Pin::new(c, t, &t.nodes[0])))
                .collect();
            most_common(&shown).map(|(c, _)| c)
        };
        Fleet {
            verdict: if below { "below_expectation" } else { "ok" },
            reference_busbw: self.reference,
            expected_busbw: expect.busbw,
            expected_from: expect.from.clone(),
            percent,
            cause: self
                .fleet_cause
                .or_else(|| below.then(most_shown).flatten()),
            evidence,
        }
    }
}

/// Bad nodes to drain; suspect and untested nodes and the nodes of bad links to run again.
fn retest(nodes: &[NodeReport], links: &[LinkReport]) -> Retest {
    let mut rerun: IndexSet<NodeName> = nodes
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Suspect | Verdict::Untested))
        .map(|r| r.name.clone())
        .collect();
    for l in links {
        rerun.extend(l.nodes.iter().cloned());
    }
    let drain: Vec<NodeName> = nodes
        .iter()
        .filter(|r| r.verdict == Verdict::Bad)
        .map(|r| r.name.clone())
        .collect();
    rerun.retain(|n| !drain.contains(n));
    Retest {
        drain,
        rerun: rerun.into_iter().collect(),
    }
}

/// Is pair test `t` of node `i` explained by its *other* node being bad?
fn explained_by_other(
    i: usize,
    t: &TestResult,
    index: &IndexMap<&NodeName, usize>,
    verdict: &[Verdict],
) -> bool {
    t.nodes
        .iter()
        .filter_map(|nd| index.get(nd).copied())
        .any(|j| j != i && verdict[j] == Verdict::Bad)
}

/// A cause a test shows on a node, with the test's evidence and whether that line is the node's own.
#[derive(Clone)]
struct Pin {
    cause: Cause,
    evidence: Option<String>,
    own: bool,
}

impl Pin {
    fn new(cause: Cause, t: &TestResult, node: &NodeName) -> Pin {
        Pin {
            cause,
            evidence: t.evidence.clone(),
            own: t.evidence_on.as_ref() == Some(node),
        }
    }
}

/// The most frequent cause (ties: the first in [`Cause`]'s order) and its evidence: the first line of
/// the node's own ranks, else the first line.
fn most_common(items: &[Pin]) -> Option<(Cause, Option<String>)> {
    let mut counts: IndexMap<Cause, (u32, Option<&Pin>)> = IndexMap::new();
    for p in items {
        let e = counts.entry(p.cause).or_insert((0, None));
        e.0 += 1;
        let better = match e.1 {
            None => p.evidence.is_some(),
            Some(q) => p.own && !q.own && p.evidence.is_some(),
        };
        if better {
            e.1 = Some(p);
        }
    }
    counts
        .into_iter()
        .max_by(|(ca, (na, _)), (cb, (nb, _))| na.cmp(nb).then(cb.cmp(ca)))
        .map(|(c, (_, p))| (c, p.and_then(|p| p.evidence.clone())))
}

impl Report {
    /// The JSON report.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a report serialises")
    }

    /// The human table.
    pub fn to_text(&self) -> String {
        let c = &self.counts;
        let mut out = String::new();
        let f = &self.fleet;
        out.push_str(&format!(
            "fleet: {} ({} nodes: {} ok, {} bad, {} suspect, {} untested; {} bad link(s); {} of {} tests missing)\n",
            f.verdict, c.nodes, c.ok, c.bad, c.suspect, c.untested, c.bad_links, c.missing, c.tests
        ));
        if let Some(r) = f.reference_busbw {
            out.push_str(&format!(
                "  reference busbw {r:.1} GB/s (median of the pairs without a fault of their own)"
            ));
            if let (Some(x), Some(p)) = (f.expected_busbw, f.percent) {
                let p = if p < 10.0 {
                    format!("{p:.1}")
                } else {
                    format!("{p:.0}")
                };
                out.push_str(&format!(
                    ", {p} % of the expected {x:.1} GB/s ({})",
                    f.expected_from.as_deref().unwrap_or("")
                ));
            }
            out.push('\n');
        }
        if let Some(cause) = f.cause {
            out.push_str(&format!(
                "  the whole fleet is below expectation; most pairs show {}: {}\n",
                cause.as_str(),
                cause.fix()
            ));
            if let Some(ev) = &f.evidence {
                out.push_str(&format!("    {ev}\n"));
            }
        }
        let listed: Vec<&NodeReport> = self
            .nodes
            .iter()
            .filter(|r| r.verdict != Verdict::Ok)
            .collect();
        if !listed.is_empty() {
            out.push_str(
                "\nnode                         verdict    cause              pair busbw  tests\n",
            );
            for r in listed {
                out.push_str(&format!(
                    "{:<28} {:<10} {:<18} {:>10}  {}/{}\n",
                    r.name.as_str(),
                    verdict_str(r.verdict),
                    r.cause.map_or("-", Cause::as_str),
                    r.pair_busbw.map_or("-".to_string(), |b| format!("{b:.1}")),
                    r.bad_tests,
                    r.tests
                ));
                if let Some(ev) = &r.evidence {
                    out.push_str(&format!("    {ev}\n"));
                }
                if let Some(note) = &r.note {
                    out.push_str(&format!("    {note}\n"));
                }
            }
        }
        if !self.links.is_empty() {
            out.push_str(
                "\nbad link                                          cause              busbw\n",
            );
            for l in &self.links {
                out.push_str(&format!(
                    "{:<49} {:<18} {:>6}\n",
                    format!("{} -- {}", l.nodes[0], l.nodes[1]),
                    l.cause.as_str(),
                    l.busbw.map_or("-".to_string(), |b| format!("{b:.1}"))
                ));
            }
        }
        let mut causes: Vec<Cause> = self
            .nodes
            .iter()
            .filter_map(|r| r.cause)
            .chain(self.links.iter().map(|l| l.cause))
            .collect::<IndexSet<_>>()
            .into_iter()
            .collect();
        causes.sort();
        if !causes.is_empty() {
            out.push_str("\nwhat to do:\n");
            for c in causes {
                out.push_str(&format!("  {}: {}\n", c.as_str(), c.fix()));
            }
        }
        if !self.retest.drain.is_empty() {
            out.push_str(&format!("\ndrain: {}\n", join(&self.retest.drain)));
        }
        if !self.retest.rerun.is_empty() {
            out.push_str(&format!("re-run: {}\n", join(&self.retest.rerun)));
        }
        out
    }
}

fn join(v: &[NodeName]) -> String {
    v.iter().map(NodeName::as_str).collect::<Vec<_>>().join(" ")
}

pub(crate) fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "ok",
        Verdict::Bad => "bad",
        Verdict::Suspect => "suspect",
        Verdict::Untested => "untested",
    }
}
