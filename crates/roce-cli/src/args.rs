//! Argument types the command line ([`crate::cli`]), the subcommands and the output share.

use clap::ValueEnum;

/// Colour choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Color {
    /// Colour when stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Output format for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Rendered for people, with source snippets.
    Human,
    /// One JSON object on stdout.
    Json,
}

/// Parses a profile argument (any string: a built-in name or a path) and offers the built-in names to
/// help and shell completion.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProfileArg;

impl clap::builder::TypedValueParser for ProfileArg {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            roce_model::builtin::names().map(clap::builder::PossibleValue::new),
        ))
    }
}
