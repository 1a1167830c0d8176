//! Printing diagnostics: miette's graphical handler for people, JSON for machines.

use std::io::IsTerminal;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};
use roce_model::Problem;
use roce_model::problem::ProblemRecord;
use serde::Serialize;

use crate::args::Color;

/// Where and how diagnostics go.
#[derive(Debug)]
pub(crate) struct Output {
    color: bool,
}

impl Output {
    /// Decide on colour once: `auto` colours a terminal unless NO_COLOR is set.
    pub(crate) fn new(color: Color) -> Self {
        let color = match color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stderr().is_terminal()
            }
        };
        Output { color }
    }

    fn handler(&self) -> GraphicalReportHandler {
        let theme = if self.color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        GraphicalReportHandler::new_themed(theme)
            .with_width(100)
            .with_wrap_lines(false)
    }

    /// Render one diagnostic to a string.
    pub(crate) fn render(&self, diagnostic: &dyn Diagnostic) -> String {
        let mut out = String::new();
        if self.handler().render_report(&mut out, diagnostic).is_err() {
            out = format!("{diagnostic}\n");
        }
        out
    }

    /// Print problems to stderr for people.
    pub(crate) fn problems(&self, problems: &[Problem]) {
        for p in problems {
            err(&self.render(p));
        }
    }

    /// Print a failure of the command itself.
    pub(crate) fn error(&self, err: &miette::Report) {
        self::err(&self.render(err.as_ref()));
    }
}

/// Write to stdout, ignoring a closed pipe (`roce … | head` must not panic).
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Write to stderr, ignoring a closed pipe.
pub(crate) fn err(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// The JSON form of a problem list, `{"problems":[…]}`: what `check`, `lint` and a `doctor` whose
/// profile does not load print.
#[derive(Debug, Serialize)]
pub(crate) struct ProblemList {
    /// Each problem's record.
    pub problems: Vec<ProblemRecord>,
}

impl ProblemList {
    /// The records of `problems`, in order.
    pub(crate) fn new(problems: &[Problem]) -> Self {
        ProblemList {
            problems: problems.iter().map(ProblemRecord::from).collect(),
        }
    }
}

/// [`ProblemList`] as one line of JSON.
pub(crate) fn json(problems: &[Problem]) -> String {
    to_json(&ProblemList::new(problems), false)
}

/// Serialise a report, on one line or pretty-printed with two-space indents.
pub(crate) fn to_json(value: &impl Serialize, pretty: bool) -> String {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    // Serialising derived structs with string keys into a String cannot fail.
    text.expect("report types serialise")
}

/// `println!` that survives a closed stdout.
macro_rules! outln {
    () => { $crate::report::out("\n") };
    ($($t:tt)*) => { $crate::report::out(&format!("{}\n", format_args!($($t)*))) };
}
/// `print!` that survives a closed stdout.
macro_rules! outp { ($($t:tt)*) => { $crate::report::out(&format!($($t)*)) }; }
/// `eprintln!` that survives a closed stderr.
macro_rules! errln {
    () => { $crate::report::err("\n") };
    ($($t:tt)*) => { $crate::report::err(&format!("{}\n", format_args!($($t)*))) };
}
pub(crate) use {errln, outln, outp};
