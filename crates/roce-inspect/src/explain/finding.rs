//! One finding about a log: a coded message, the line that shows it, and the fix.

use std::fmt;

use miette::{
    Diagnostic, LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};
use roce_model::{Code, Severity};

/// The longest excerpt of a log line a finding keeps (longer lines are cut at a character boundary).
pub const EXCERPT_MAX: usize = 400;

/// A finding about a log: what is wrong, where the log shows it, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The catalogue code (`roce::explain::…`).
    pub code: Code,
    /// Error or warning (from the code).
    pub severity: Severity,
    /// What the log shows.
    pub message: String,
    /// How to fix it.
    pub help: String,
    /// The first line that shows it, when one does.
    pub evidence: Option<Evidence>,
    /// How many lines showed it.
    pub count: u64,
    /// Hosts whose ranks showed it (at most [`HOSTS_MAX`], in order of appearance).
    pub hosts: Vec<String>,
    /// The finding this one is a consequence of (it comes earlier in the report).
    pub caused_by: Option<Code>,
}

/// The most hosts a finding lists.
pub const HOSTS_MAX: usize = 32;

/// A line of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The log's name (path, or `<stdin>`).
    pub file: String,
    /// 1-based line number.
    pub line: u64,
    /// The line's text (cut at [`EXCERPT_MAX`] bytes).
    pub text: String,
}

impl Finding {
    /// A finding with this code's severity.
    pub fn new(code: Code, message: impl Into<String>, help: impl Into<String>) -> Self {
        Finding {
            code,
            severity: code.severity(),
            message: message.into(),
            help: help.into(),
            evidence: None,
            count: 1,
            hosts: Vec::new(),
            caused_by: None,
        }
    }

    /// Attach the line that shows it.
    pub fn at(mut self, evidence: Option<Evidence>) -> Self {
        self.evidence = evidence;
        self
    }

    /// Is this an error?
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl Evidence {
    /// Evidence from a raw line (cut, decoded lossily).
    pub fn new(file: &str, line: u64, bytes: &[u8]) -> Self {
        let cut = &bytes[..bytes.len().min(EXCERPT_MAX)];
        let mut text = String::from_utf8_lossy(cut).into_owned();
        text.retain(|c| !c.is_control() || c == '\t');
        Evidence {
            file: file.to_string(),
            line,
            text,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Finding {}

/// The one log line a finding points at, numbered as in the file.
#[derive(Debug)]
struct LineSource<'a>(&'a Evidence);

impl SourceCode for LineSource<'_> {
    fn read_span<'b>(
        &'b self,
        _span: &SourceSpan,
        _before: usize,
        _after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let e = self.0;
        let line = usize::try_from(e.line.saturating_sub(1)).unwrap_or(usize::MAX);
        Ok(Box::new(MietteSpanContents::new_named(
            e.file.clone(),
            e.text.as_bytes(),
            SourceSpan::new(0.into(), e.text.len()),
            line,
            0,
            1,
        )))
    }
}

/// A [`Finding`] with its line, rendered by miette.
#[derive(Debug)]
pub struct Rendered<'a> {
    finding: &'a Finding,
    source: Option<LineSource<'a>>,
}

impl<'a> Rendered<'a> {
    /// Wrap a finding for rendering.
    pub fn new(finding: &'a Finding) -> Self {
        Rendered {
            finding,
            source: finding.evidence.as_ref().map(LineSource),
        }
    }
}

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.finding.count;
        if n > 1 {
            write!(f, "{} ({n} lines)", self.finding.message)
        } else {
            f.write_str(&self.finding.message)
        }
    }
}

impl std::error::Error for Rendered<'_> {}

impl Diagnostic for Rendered<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.finding.code.as_str()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        (!self.finding.help.is_empty())
            .then(|| Box::new(&self.finding.help) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let e = self.finding.evidence.as_ref()?;
        let hosts = &self.finding.hosts;
        let label = match hosts.len() {
            0 => None,
            1 => Some(format!("on {}", hosts[0])),
            n => Some(format!("on {n} hosts")),
        };
        Some(Box::new(std::iter::once(
            LabeledSpan::new_primary_with_span(label, SourceSpan::new(0.into(), e.text.len())),
        )))
    }
}
