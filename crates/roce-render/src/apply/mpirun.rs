//! Open MPI's `mpirun -x NAME[=VALUE]` in an MPI launcher's command: find what it forwards, add names.
//!
//! Open MPI passes an environment variable to the ranks only when `mpirun` is told to with `-x NAME`
//! (the launcher's value) or `-x NAME=VALUE`; the worker pods' own env is the other way in. Two command
//! shapes are understood:
//!
//! * argv form: `command`/`args` lists where one item is the `mpirun` (or `mpiexec`) program;
//! * script form: `command: [sh|bash, -c, SCRIPT]` (or the script in `args`) whose first `mpirun` word
//!   starts the invocation; the words up to the end of that command (`;`, `&&`, `|`, or a line end not
//!   escaped with `\`) are read with shell quoting rules.

use std::borrow::Cow;
use std::ops::Range;

/// One `-x` of an mpirun invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forward {
    /// The variable.
    pub name: String,
    /// `-x NAME=VALUE`'s value; `None` forwards the launcher's own value.
    pub value: Option<String>,
    /// Where the `NAME[=VALUE]` word is: the argv item, or bytes of the script.
    pub at: Place,
}

/// Where a word of the command is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Index into the argv list (`command` then `args`, concatenated).
    Arg(usize),
    /// Byte range in the script (which is argv item `item`).
    Script {
        /// The argv index of the script.
        item: usize,
        /// The word's bytes in the script.
        range: Range<usize>,
    },
}

/// The mpirun invocation of a launcher's argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The argv index of the `mpirun` item, or of the script holding it.
    pub item: usize,
    /// Script form: byte offset just after the `mpirun` word.
    pub script_after: Option<usize>,
    /// Every `-x` found.
    pub forwards: Vec<Forward>,
    /// A `-x` of a shell expansion (`-x $ENV_VARS`, a list of names the script computes, e.g. from
    /// `${!NCCL*}`): the ranks get variables nobody can list from the manifest.
    pub expands: bool,
}

impl Invocation {
    /// The forward of `name`, if any.
    pub fn forward(&self, name: &str) -> Option<&Forward> {
        self.forwards.iter().find(|f| f.name == name)
    }
}

fn is_mpirun(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    matches!(
        base,
        "mpirun" | "mpiexec" | "mpirun.openmpi" | "mpiexec.openmpi" | "orterun" | "prterun"
    )
}

/// Find the mpirun invocation in `argv` (the container's `command` followed by its `args`).
///
/// ```
/// use roce_render::plumbing::mpirun::find;
/// let argv = ["mpirun", "-np", "8", "-x", "NCCL_DEBUG=INFO", "./all_reduce_perf"];
/// let inv = find(&argv).unwrap();
/// assert_eq!(inv.forward("NCCL_DEBUG").unwrap().value.as_deref(), Some("INFO"));
/// let script = ["/bin/bash", "-c", "set -e\nmpirun -x NCCL_IB_HCA \\\n  ./run"];
/// assert!(find(&script).unwrap().forward("NCCL_IB_HCA").is_some());
/// assert!(!find(&script).unwrap().expands);
/// // A list of names the script computes: which variables reach the ranks is the shell's to say.
/// let listed = ["bash", "-c", "V=$(echo ${!NCCL*} | sed 's/ / -x /g')\nmpirun -x PATH -x $V ./run"];
/// assert!(find(&listed).unwrap().expands);
/// ```
pub fn find<S: AsRef<str>>(argv: &[S]) -> Option<Invocation> {
    if let Some(i) = argv.iter().position(|a| is_mpirun(a.as_ref())) {
        let mut forwards = Vec::new();
        let mut expands = false;
        let mut j = i + 1;
        while j < argv.len() {
            let arg = argv[j].as_ref();
            if matches!(arg, "-x" | "--x") && j + 1 < argv.len() {
                expands |= argv[j + 1].as_ref().starts_with('$');
                forwards.extend(forward(argv[j + 1].as_ref(), Place::Arg(j + 1)));
                j += 2;
                continue;
            }
            j += 1;
        }
        return Some(Invocation {
            item: i,
            script_after: None,
            forwards,
            expands,
        });
    }
    // Script form: a shell with `-c` (or `-lc`, `-ec`…) and a script.
    let shell = argv.first().map(AsRef::as_ref)?;
    let base = shell.rsplit('/').next().unwrap_or(shell);
    if !matches!(base, "sh" | "bash" | "dash" | "zsh") {
        return None;
    }
    let flag = argv
        .iter()
        .position(|a| a.as_ref().starts_with('-') && a.as_ref().ends_with('c'))?;
    let item = flag + 1;
    let script = argv.get(item)?.as_ref();
    find_in_script(script, item)
}

fn forward(word: &str, at: Place) -> Option<Forward> {
    let (name, value) = match word.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (word, None),
    };
    crate::quote::is_env_key(name).then(|| Forward {
        name: name.to_string(),
        value,
        at,
    })
}

/// The script's mpirun invocation that runs the job: the one with the most `-x` forwards, the last of
/// equals (a readiness loop such as `until mpirun … hostname; do sleep 5; done` comes first and forwards
/// little).
fn find_in_script(script: &str, item: usize) -> Option<Invocation> {
    let words = shell_words(script);
    let mut best: Option<Invocation> = None;
    for start in (0..words.len()).filter(|&i| is_mpirun(&words[i].text)) {
        let mut forwards = Vec::new();
        let mut expands = false;
        let mut j = start + 1;
        while j < words.len() && !words[j].ends_command {
            if matches!(&*words[j].text, "-x" | "--x") && j + 1 < words.len() {
                let w = &words[j + 1];
                expands |= script[w.range.clone()].starts_with('$');
                forwards.extend(forward(
                    &w.text,
                    Place::Script {
                        item,
                        range: w.range.clone(),
                    },
                ));
                j += 2;
                continue;
            }
            j += 1;
        }
        if best
            .as_ref()
            .is_none_or(|b| forwards.len() >= b.forwards.len())
        {
            best = Some(Invocation {
                item,
                script_after: Some(words[start].range.end),
                forwards,
                expands,
            });
        }
    }
    best
}

/// A shell word: its unquoted text (the script's own bytes unless quotes or escapes changed them) and
/// its bytes; operators (`;`, `&&`, `|`, a line end) are words with `ends_command` set.
#[derive(Debug)]
struct Word<'s> {
    text: Cow<'s, str>,
    range: Range<usize>,
    ends_command: bool,
}

/// Split a script into words the way `sh` does for simple commands: single and double quotes, `\`
/// escapes and line continuations, `#` comments. Expansions are kept as text.
fn shell_words(script: &str) -> Vec<Word<'_>> {
    let bytes = script.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b' ' | b'\t' => i += 1,
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            b'\n' | b';' | b'&' | b'|' | b'(' | b')' => {
                words.push(Word {
                    text: Cow::Borrowed(&script[i..=i]),
                    range: i..i + 1,
                    ends_command: true,
                });
                i += 1;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {
                let start = i;
                // The word's text once a quote or escape made it differ from its bytes.
                let mut owned: Option<String> = None;
                while i < bytes.len() {
                    match bytes[i] {
                        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' => break,
                        b'\\' if i + 1 < bytes.len() => {
                            let text = owned.get_or_insert_with(|| script[start..i].to_owned());
                            if bytes[i + 1] != b'\n' {
                                let ch = next_char(script, i + 1);
                                text.push_str(ch);
                                i += 1 + ch.len();
                            } else {
                                i += 2;
                            }
                        }
                        // `$(…)`, `$((…))`: a command substitution or arithmetic, part of the word.
                        b'$' if bytes.get(i + 1) == Some(&b'(') => {
                            let mut depth = 0usize;
                            let start_sub = i;
                            i += 1;
                            while i < bytes.len() {
                                match bytes[i] {
                                    b'(' => depth += 1,
                                    b')' => {
                                        depth -= 1;
                                        if depth == 0 {
                                            i += 1;
                                            break;
                                        }
                                    }
                                    _ => {}
                                }
                                i += 1;
                            }
                            if let Some(text) = &mut owned {
                                text.push_str(&script[start_sub..i.min(bytes.len())]);
                            }
                        }
                        b'\'' => {
                            let text = owned.get_or_insert_with(|| script[start..i].to_owned());
                            let end = script[i + 1..]
                                .find('\'')
                                .map_or(bytes.len(), |e| i + 1 + e);
                            text.push_str(&script[i + 1..end]);
                            i = (end + 1).min(bytes.len());
                        }
                        b'"' => {
                            let text = owned.get_or_insert_with(|| script[start..i].to_owned());
                            i += 1;
                            while i < bytes.len() && bytes[i] != b'"' {
                                if bytes[i] == b'\\'
                                    && matches!(bytes.get(i + 1), Some(b'"' | b'\\' | b'$' | b'`'))
                                {
                                    i += 1;
                                }
                                let ch = next_char(script, i);
                                text.push_str(ch);
                                i += ch.len();
                            }
                            i = (i + 1).min(bytes.len());
                        }
                        // A run of bytes the word keeps as they are (it ends at an ASCII byte: a char
                        // boundary).
                        _ => {
                            let run = i
                                + 1
                                + bytes[i + 1..]
                                    .iter()
                                    .position(|&b| {
                                        matches!(
                                            b,
                                            b' ' | b'\t'
                                                | b'\n'
                                                | b';'
                                                | b'&'
                                                | b'|'
                                                | b'('
                                                | b')'
                                                | b'\\'
                                                | b'$'
                                                | b'\''
                                                | b'"'
                                        )
                                    })
                                    .unwrap_or(bytes.len() - i - 1);
                            if let Some(text) = &mut owned {
                                text.push_str(&script[i..run]);
                            }
                            i = run;
                        }
                    }
                }
                words.push(Word {
                    text: owned.map_or(Cow::Borrowed(&script[start..i]), Cow::Owned),
                    range: start..i,
                    ends_command: false,
                });
            }
        }
    }
    words
}

/// The character starting at byte `i` (which is on a boundary), as a string slice.
fn next_char(s: &str, i: usize) -> &str {
    let len = s[i..].chars().next().map_or(1, char::len_utf8);
    &s[i..(i + len).min(s.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_form() {
        let argv = [
            "/usr/bin/mpirun",
            "-x",
            "A",
            "-x",
            "B=1",
            "-np",
            "2",
            "-x",
            "not-a-name",
            "prog",
        ];
        let inv = find(&argv).unwrap();
        assert_eq!(inv.item, 0);
        let names: Vec<_> = inv.forwards.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["A", "B"]);
        assert_eq!(inv.forward("B").unwrap().at, Place::Arg(4));
        assert!(find(&["python", "train.py"]).is_none());
    }

    #[test]
    fn script_form_reads_quotes_and_continuations() {
        let script = "echo start; mpirun --allow-run-as-root \\\n  -x 'NCCL_IB_HCA=ibp' -x \"UCX_TLS=tcp\" \\\n  -x OMPI_X ./run && -x LATER\n";
        let inv = find(&["bash", "-c", script]).unwrap();
        assert_eq!(inv.item, 2);
        let names: Vec<_> = inv.forwards.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["NCCL_IB_HCA", "UCX_TLS", "OMPI_X"]);
        let Place::Script { range, .. } = &inv.forward("UCX_TLS").unwrap().at else {
            panic!("script place")
        };
        assert_eq!(&script[range.clone()], "\"UCX_TLS=tcp\"");
        assert_eq!(&script[..inv.script_after.unwrap()], "echo start; mpirun");
        assert!(find(&["sh", "-c", "python train.py"]).is_none());
    }

    #[test]
    fn words_are_unquoted_and_kept_whole() {
        let script = "mpirun -x A=b'c d'\"e\\\"f\" $(echo a b)x \\\n -x é\\ ü;end\\";
        let words = shell_words(script);
        let texts: Vec<&str> = words.iter().map(|w| &*w.text).collect();
        assert_eq!(
            texts,
            [
                "mpirun",
                "-x",
                "A=bc de\"f",
                "$(echo a b)x",
                "-x",
                "é ü",
                ";",
                "end\\"
            ]
        );
        let ranges: Vec<&str> = words.iter().map(|w| &script[w.range.clone()]).collect();
        assert_eq!(ranges[2], "A=b'c d'\"e\\\"f\"");
        assert_eq!(ranges[5], "é\\ ü");
    }

    #[test]
    fn the_job_s_invocation_is_found_past_probes_and_substitutions() {
        let script = "until mpirun -np 2 -x LD_LIBRARY_PATH hostname; do sleep 5; done\nmpirun -np $((HOSTS*8)) -npernode $(nproc) \\\n  -x NCCL_IB_HCA=mlx5 -x UCX_TLS=tcp ./run\n";
        let inv = find(&["bash", "-c", script]).unwrap();
        let names: Vec<_> = inv.forwards.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["NCCL_IB_HCA", "UCX_TLS"]);
    }
}
