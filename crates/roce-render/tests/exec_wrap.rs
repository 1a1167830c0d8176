//! Starting the job behind `roce exec`: the pod target's `command`/`args`, the dockerfile target's
//! `COPY` of the binary and its `ENTRYPOINT`, `roce apply --exec`, fed to the real consumers
//! (kubernetes-validate --strict, hadolint), and what refuses the options.

use roce_model::fabric::env::POD_DEPENDENT;
use roce_model::{BuiltinsOnly, Profile, builtin, load};
use roce_render::apply::{ApplyOptions, apply_wrapped};
use roce_render::exec::{ExecWrap, ROCE_BINARY};
use roce_render::{RenderError, RenderOptions, Target, plan, render};

use crate::support::consumers;

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
        let min = plan::lower(&profile(name)).dra.min_kubernetes_minor();
        if let Err(e) = consumers::validate_manifest(&pod, min) {
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
            text.contains("cargo build --release -p roce-cli --target x86_64-unknown-linux-gnu")
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
    // The kustomize target wraps each workload's own command: it has no use for one.
    let e = render(
        &plan::lower(&profile(name)),
        Target::Kustomize,
        &wrap(name, Some("x")),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            RenderError::OptionForTarget {
                option: "exec",
                target: "kustomize",
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("--command is for the pod target"),
        "{e}"
    );
    assert!(
        render(
            &plan::lower(&profile(name)),
            Target::Kustomize,
            &wrap(name, None)
        )
        .is_ok()
    );
    for target in [
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

// ---------------------------------------------------------------------------------------------------
// roce apply --exec

const JOB: &str = "\
# A Job as a team writes it.
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: ghcr.io/example/trainer:1.0
        # the job
        command: [torchrun, --nproc-per-node=4, train.py]
        args:
        - --epochs=3
        env:
        - name: NCCL_IB_HCA
          value: mlx5
        - name: MY_VAR
          value: \"1\"
";

fn apply_exec(text: &str, name: &str) -> Result<String, Vec<roce_model::Problem>> {
    let wrap = ExecWrap {
        profile: name.to_string(),
        command: None,
    };
    apply_wrapped(
        &roce_model::Source::new("job.yaml", text),
        &plan::lower(&profile(name)),
        &ApplyOptions::default(),
        &wrap,
    )
    .map(|a| a.text)
}

#[test]
fn apply_puts_roce_exec_in_front_of_the_command_and_leaves_the_computed_variables_out() {
    for name in builtin::names() {
        let out = apply_exec(JOB, name).unwrap();
        let want = format!(
            "        command:\n        - {ROCE_BINARY}\n        - exec\n        - --profile\n        - {name}\n        - --\n        - torchrun\n        - --nproc-per-node=4\n        - train.py\n        args:\n        - --epochs=3\n"
        );
        // (the writer quotes `--profile` and `--`; the quoting is the YAML's business)
        assert!(out.replace('"', "").contains(&want), "{name}:\n{out}");
        assert!(out.contains("        # the job\n"), "the comment survives");
        // The user's NCCL_IB_HCA is a profile variable: it goes, as every pod-dependent one (it would win).
        for v in POD_DEPENDENT {
            assert!(!out.contains(&format!("name: {v}\n")), "{name}: {v}\n{out}");
        }
        assert!(out.contains("- name: MY_VAR\n"));
        let roce = profile(name).fabric.kind.value == roce_model::model::FabricKind::Roce;
        assert!(
            out.contains("- name: NCCL_IB_ADDR_FAMILY\n") == roce,
            "{name}"
        );
        // Applying again changes nothing; with another profile only the profile word changes.
        assert_eq!(apply_exec(&out, name).unwrap(), out, "{name}");
        let min = plan::lower(&profile(name)).dra.min_kubernetes_minor();
        if let Err(e) = consumers::validate_manifest(&out, min) {
            panic!("{name}: {e}");
        }
    }
    let nixl = apply_exec(JOB, "coreweave/gb300-roce-nixl").unwrap();
    let again = apply_exec(&nixl, "coreweave/gb300-roce").unwrap();
    assert!(
        again
            .replace('"', "")
            .contains("        - coreweave/gb300-roce\n        - --\n        - torchrun\n"),
        "{again}"
    );
    assert_eq!(again.matches("/usr/local/bin/roce").count(), 1);
}

#[test]
fn apply_refuses_what_it_cannot_wrap() {
    let name = "coreweave/gb300-roce";
    let codes = |text: &str| -> Vec<String> {
        apply_exec(text, name)
            .unwrap_err()
            .iter()
            .map(|p| format!("{} {}", p.code, p.message))
            .collect()
    };
    // The image's ENTRYPOINT is unknown: without `command` there is nothing to put roce exec in front of.
    let args_only = JOB.replace(
        "        command: [torchrun, --nproc-per-node=4, train.py]\n",
        "",
    );
    let c = codes(&args_only);
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(
        c[0].starts_with("roce::exec::cannot_wrap container `main` has no `command`"),
        "{c:?}"
    );
    // An MPI job: the ranks are mpirun's.
    let mpijob = "\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: t
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: x
            command: [mpirun, -np, \"8\", ./app]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: x
            command: [/usr/sbin/sshd, -De]
";
    let c = codes(mpijob);
    assert!(
        c.iter()
            .any(|m| m.starts_with("roce::exec::cannot_wrap this MPIJob is an MPI job")),
        "{c:?}"
    );
}
