//! Did-you-mean suggestions for misspelled keys and values.

/// The closest candidate to `input`, if any is close enough to be a likely typo.
///
/// ```
/// use roce_model::plumbing::suggest::closest;
/// assert_eq!(closest("trafic-class", ["traffic-class", "addr-family"]), Some("traffic-class"));
/// assert_eq!(closest("zzz", ["traffic-class"]), None);
/// ```
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let input_l = input.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&input_l, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// A help line: "did you mean `x`?" when one candidate is close, else the list of valid choices.
pub fn help(input: &str, candidates: &[&str]) -> String {
    let list = candidates
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match closest(input, candidates.iter().copied()) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("expected one of {list}"),
    }
}
