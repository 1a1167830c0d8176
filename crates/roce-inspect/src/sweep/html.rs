//! The self-contained HTML report: a summary, an SVG heatmap of every node's pair bandwidth per round, bars
//! of each node's median, and the tables. No scripts, styles inline, nothing fetched.

use std::fmt::Write;

use roce_render::sweep::Campaign;

use super::{Report, State, Verdict, verdict_str};

/// Escape text for HTML.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A cell's colour: green at the reference, through yellow, to red at half of it; grey for no result,
/// dark red for a failed or hung test.
fn colour(fraction: Option<f64>, state: State) -> &'static str {
    match (state, fraction) {
        (State::Missing, _) => "#cccccc",
        (State::Failed | State::Hung, _) => "#7f0000",
        (_, None) => "#cccccc",
        (_, Some(f)) if f >= 0.95 => "#1a9850",
        (_, Some(f)) if f >= 0.9 => "#91cf60",
        (_, Some(f)) if f >= 0.8 => "#fee08b",
        (_, Some(f)) if f >= 0.65 => "#fc8d59",
        _ => "#d73027",
    }
}

/// The report as one HTML page.
pub fn to_html(report: &Report, campaign: &Campaign) -> String {
    let mut h = String::new();
    head(&mut h, report);
    let g = Grid::of(report, campaign);
    let (width, height) = g.size();
    let _ = write!(
        h,
        "<h2>Pair bandwidth by round</h2>\n<p>Each row is a node, each column a round; a cell is the pair's bus \
         bandwidth against the reference (green at it, red at half; dark red failed or hung; grey no result). \
         The bars are each node's median.</p>\n\
         <svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" aria-label=\"pair bandwidth heatmap\">\n"
    );
    g.cells(&mut h, report, campaign);
    g.bars(&mut h, report, campaign);
    h.push_str("</svg>\n");
    nodes_table(&mut h, report);
    links_table(&mut h, report);
    h.push_str("</body></html>\n");
    h
}

/// The page's head, title and the text report's summary lines.
fn head(h: &mut String, report: &Report) {
    let title = format!("roce sweep: {}", report.profile);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title></head>\n\
         <body style=\"font-family:sans-serif;margin:1.5em\">\n<h1>{}</h1>\n<pre id=\"summary\">{}</pre>\n",
        esc(&title),
        esc(&title),
        esc(report
            .to_text()
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join("\n")
            .as_str())
    );
}

/// The heatmap's geometry: rows shrink as the fleet grows (names shown only up to 64 nodes), one
/// column per round, then the bars of each node's median.
struct Grid {
    reference: Option<f64>,
    nodes: usize,
    rounds: usize,
    row: f64,
    cell: f64,
    label: f64,
    bar: f64,
}

impl Grid {
    fn of(report: &Report, campaign: &Campaign) -> Grid {
        let n = campaign.nodes.len();
        Grid {
            reference: report.fleet.reference_busbw,
            nodes: n,
            rounds: campaign.rounds.len(),
            row: if n > 512 {
                2.0
            } else if n > 64 {
                6.0
            } else {
                14.0
            },
            cell: 18.0,
            label: if n <= 64 { 160.0 } else { 0.0 },
            bar: 200.0,
        }
    }

    /// The SVG's width and height.
    fn size(&self) -> (f64, f64) {
        (
            self.label + self.cell * self.rounds as f64 + 20.0 + self.bar + 60.0,
            self.row * self.nodes as f64 + 30.0,
        )
    }

    /// A cell per node per round: the pair's bandwidth against the reference, on both nodes' rows.
    fn cells(&self, h: &mut String, report: &Report, campaign: &Campaign) {
        let (row, cell, label) = (self.row, self.cell, self.label);
        // the test of each node in each round
        let pos: std::collections::HashMap<&str, usize> = campaign
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let by_output: std::collections::HashMap<&str, &super::TestResult> = report
            .tests
            .iter()
            .map(|t| (t.output.as_str(), t))
            .collect();
        for (c, r) in campaign.rounds.iter().enumerate() {
            let x = label + cell * c as f64;
            let _ = writeln!(
                h,
                "<text x=\"{:.1}\" y=\"12\" font-size=\"10\">r{}</text>",
                x + 2.0,
                r.index
            );
            for p in &r.pairs {
                let Some(t) = by_output.get(p.output.as_str()) else {
                    continue;
                };
                let frac = match (t.busbw, self.reference) {
                    (Some(b), Some(r)) if r > 0.0 => Some(b / r),
                    _ => None,
                };
                let fill = colour(frac, t.state);
                let tip = format!(
                    "{} -- {}: {}{}",
                    p.nodes[0],
                    p.nodes[1],
                    t.busbw
                        .map_or("no result".to_string(), |b| format!("{b:.1} GB/s")),
                    t.cause
                        .map_or(String::new(), |c| format!(" ({})", c.as_str()))
                );
                for node in &p.nodes {
                    if let Some(&i) = pos.get(node.as_str()) {
                        let _ = writeln!(
                            h,
                            "<rect class=\"cell\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{row:.1}\" fill=\"{fill}\"><title>{}</title></rect>",
                            20.0 + row * i as f64,
                            cell - 2.0,
                            esc(&tip)
                        );
                    }
                }
            }
        }
    }

    /// Each node's name (where there is room) and a bar of its median pair bandwidth, coloured by verdict,
    /// scaled to the largest median or the reference.
    fn bars(&self, h: &mut String, report: &Report, campaign: &Campaign) {
        let (row, label, bar) = (self.row, self.label, self.bar);
        let by_name: std::collections::HashMap<&str, &super::NodeReport> =
            report.nodes.iter().map(|r| (r.name.as_str(), r)).collect();
        let max = report
            .nodes
            .iter()
            .filter_map(|r| r.pair_busbw)
            .fold(self.reference.unwrap_or(0.0), f64::max)
            .max(1e-9);
        let bx = label + self.cell * self.rounds as f64 + 20.0;
        for (i, name) in campaign.nodes.iter().enumerate() {
            let y = 20.0 + row * i as f64;
            let r = by_name.get(name.as_str());
            if label > 0.0 {
                let _ = writeln!(
                    h,
                    "<text x=\"0\" y=\"{:.1}\" font-size=\"10\">{}</text>",
                    y + row - 3.0,
                    esc(name.as_str())
                );
            }
            if let Some(r) = r {
                let fill = match r.verdict {
                    Verdict::Ok => "#4575b4",
                    Verdict::Bad => "#d73027",
                    Verdict::Suspect => "#fc8d59",
                    Verdict::Untested => "#999999",
                };
                let w = r.pair_busbw.map_or(0.0, |b| bar * b / max);
                let _ = writeln!(
                    h,
                    "<rect class=\"bar\" x=\"{bx:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{}: {} {}</title></rect>",
                    (row - 1.0).max(1.0),
                    esc(name.as_str()),
                    verdict_str(r.verdict),
                    r.pair_busbw
                        .map_or("-".to_string(), |b| format!("{b:.1} GB/s"))
                );
            }
        }
    }
}

/// The nodes whose verdict is not ok, with cause and evidence.
fn nodes_table(h: &mut String, report: &Report) {
    let listed: Vec<_> = report
        .nodes
        .iter()
        .filter(|r| r.verdict != Verdict::Ok)
        .collect();
    let _ = writeln!(
        h,
        "<h2>Nodes that are not ok ({})</h2>\n<table id=\"nodes\" border=\"1\" cellpadding=\"3\" style=\"border-collapse:collapse\">\n\
         <tr><th>node</th><th>verdict</th><th>cause</th><th>pair busbw (GB/s)</th><th>bad tests</th><th>evidence</th></tr>",
        listed.len()
    );
    for r in listed {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td><td><code>{}</code></td></tr>",
            esc(r.name.as_str()),
            verdict_str(r.verdict),
            r.cause.map_or("", |c| c.as_str()),
            r.pair_busbw.map_or(String::new(), |b| format!("{b:.1}")),
            r.bad_tests,
            r.tests,
            esc(r.evidence.as_deref().or(r.note.as_deref()).unwrap_or(""))
        );
    }
    h.push_str("</table>\n");
}

/// The links judged bad, with the test output that shows it.
fn links_table(h: &mut String, report: &Report) {
    let _ = writeln!(
        h,
        "<h2>Bad links ({})</h2>\n<table id=\"links\" border=\"1\" cellpadding=\"3\" style=\"border-collapse:collapse\">\n\
         <tr><th>nodes</th><th>cause</th><th>busbw (GB/s)</th><th>output</th></tr>",
        report.links.len()
    );
    for l in &report.links {
        let _ = writeln!(
            h,
            "<tr><td>{} &#8211; {}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(l.nodes[0].as_str()),
            esc(l.nodes[1].as_str()),
            l.cause.as_str(),
            l.busbw.map_or(String::new(), |b| format!("{b:.1}")),
            esc(&l.output)
        );
    }
    h.push_str("</table>\n");
}
