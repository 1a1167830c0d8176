//! Starting the job behind `roce exec`: the pod target's `command`/`args`, the dockerfile target's
//! `COPY` of the binary and its `ENTRYPOINT`, fed to the real consumers (kubernetes-validate --strict,
//! hadolint), and the targets that refuse the options.

#[path = "support/consumers.rs"]
mod consumers;

use roce_model::fabric::env::POD_DEPENDENT;
use roce_model::{BuiltinsOnly, Profile, builtin, load};
use roce_render::exec::{ExecWrap, ROCE_BINARY};
use roce_render::{RenderError, RenderOptions, Target, plan, render};

fn profile(name: &str) -> Profile {
    let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
    loaded
        .profile
        .unwrap_or_else(|| panic!("{name}: {:#?}", loaded.problems))
}

fn wrap(profile: &str, command: Option<&str>) -> RenderOptions {
    RenderOptions {
        exec: Some(ExecWrap {
            profile: profile.to_string(),
            command: command.map(str::to_string),
        }),
        ..RenderOptions::default()
    }
}

fn one(name: &str, target: Target, opts: &RenderOptions) -> Result<String, RenderError> {
    let files = render(&plan::lower(&profile(name)), target, opts)?;
    assert_eq!(files.len(), 1);
    Ok(files[0].contents.clone())
}

/// A rendered pod without the `- name: X` / `value: …` pairs of the pod-dependent variables.
fn without_pod_dependent(pod: &str) -> String {
    let mut out = Vec::new();
    let mut lines = pod.lines().peekable();
    while let Some(l) = lines.next() {
        if POD_DEPENDENT
            .iter()
            .any(|v| l.trim_start() == format!("- name: {v}"))
        {
            lines.next();
            continue;
        }
        out.push(l);
    }
    format!("{}\n", out.join("\n"))
}

#[test]
fn the_pod_runs_its_job_behind_roce_exec() {
    for name in builtin::names() {
        let opts = wrap(name, Some("python train.py --epochs 3 \"$RUN\""));
        let pod = one(name, Target::Pod, &opts).unwrap();
        let want = format!(
            "    command:\n    - {ROCE_BINARY}\n    - exec\n    - \"--profile\"\n    - {name}\n    - \"--\"\n    args:\n    - sh\n    - \"-c\"\n    - \"python train.py --epochs 3 \\\"$RUN\\\"\"\n    env:\n"
        );
        assert!(pod.contains(&want), "{name}:\n{pod}");
        // Everything else is the pod without --exec, less the variables roce exec computes: a static value
        // would win over the computed one.
        let plain = one(name, Target::Pod, &RenderOptions::default()).unwrap();
        assert_eq!(
            pod.replace(&want, "    env:\n"),
            without_pod_dependent(&plain),
            "{name}"
        );
        for v in POD_DEPENDENT {
            assert!(!pod.contains(&format!("name: {v}\n")), "{name}: {v}");
        }
        if let Err(e) = consumers::kubernetes_validate_strict(&pod, consumers::K8S_VERSIONS) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn the_dockerfile_copies_the_binary_and_starts_behind_roce_exec() {
    for name in builtin::names() {
        let opts = RenderOptions {
            with_roce_binary: true,
            ..wrap(name, None)
        };
        let text = one(name, Target::Dockerfile, &opts).unwrap();
        assert!(
            text.contains(&format!("\nCOPY roce {ROCE_BINARY}\n")),
            "{name}:\n{text}"
        );
        assert!(
            text.contains("cargo build --release -p roce-cli --target x86_64-unknown-linux-musl")
        );
        assert!(text.ends_with(&format!(
            "ENTRYPOINT [\"{ROCE_BINARY}\", \"exec\", \"--profile\", \"{name}\", \"--\"]\n"
        )));
        let plan = plan::lower(&profile(name));
        for v in &plan.env {
            let line = format!("{}=", v.name);
            assert_eq!(
                text.contains(&line),
                !POD_DEPENDENT.contains(&v.name.as_str()),
                "{name}: {}",
                v.name
            );
        }
        if let Err(e) = consumers::hadolint(&format!(
            "FROM ubuntu:24.04\n{text}CMD [\"sleep\", \"1\"]\n"
        )) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn targets_that_cannot_wrap_refuse() {
    let name = "coreweave/gb300-roce";
    // The pod has no command of its own.
    let e = one(name, Target::Pod, &wrap(name, None)).unwrap_err();
    assert!(
        e.to_string()
            .contains("give the job's command line with --command"),
        "{e}"
    );
    for target in [
        Target::Kustomize,
        Target::Sbatch,
        Target::Env,
        Target::NcclTestsMpijob,
        Target::NcclTestsSbatch,
        Target::UcxPerftest,
    ] {
        let e = render(&plan::lower(&profile(name)), target, &wrap(name, Some("x"))).unwrap_err();
        assert!(
            matches!(e, RenderError::OptionForTarget { option: "exec", .. }),
            "{target}: {e}"
        );
    }
    let binary = RenderOptions {
        with_roce_binary: true,
        ..RenderOptions::default()
    };
    let e = one(name, Target::Pod, &binary).unwrap_err();
    assert!(
        matches!(
            e,
            RenderError::OptionForTarget {
                option: "with-roce-binary",
                target: "pod",
                ..
            }
        ),
        "{e}"
    );
}
