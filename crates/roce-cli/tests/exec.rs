//! `roce exec` through the built binary, on fixture trees: the job replaces roce (same process, its exit
//! status and signals are the job's), gets the computed variables, and never starts when the pod cannot
//! meet the profile.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary directory standing for `/`, removed when dropped.
struct Tree(PathBuf);

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Tree {
    fn new(tag: &str) -> Tree {
        let dir = std::env::temp_dir().join(format!("roce-exec-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let t = Tree(dir);
        for n in ["lo", "eth0"] {
            t.file(&format!("sys/class/net/{n}/operstate"), "up\n");
        }
        t
    }

    fn file(&self, path: &str, text: &str) {
        let p = self.0.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A GB300 RoCE pod: ibp0p0…ibp3p3 ACTIVE, netdevs net1…net16, each port's GID table with the pod's
    /// link-local pair at 0/1 and its `fd02::` global pair at `global`/`global + 1`.
    fn gb300(tag: &str, global: u32) -> Tree {
        let t = Tree::new(tag);
        for k in 0..16u32 {
            let (dev, net) = (format!("ibp{}p{}", k / 4, k % 4), format!("net{}", k + 1));
            t.file(&format!("sys/class/net/{net}/operstate"), "up\n");
            let base = format!("sys/class/infiniband/{dev}/ports/1");
            t.file(&format!("{base}/state"), "4: ACTIVE\n");
            t.file(&format!("{base}/link_layer"), "Ethernet\n");
            for i in 0..16 {
                let gid = if i < 2 {
                    format!("fe80:0000:0000:0000:7a1c:2aff:fe20:{k:04x}")
                } else if i == global || i == global + 1 {
                    format!(
                        "fd02:{:04x}:01{:02x}:0101:0000:0000:0000:0007",
                        k % 4,
                        k / 4
                    )
                } else {
                    "0000:0000:0000:0000:0000:0000:0000:0000".to_string()
                };
                t.file(&format!("{base}/gids/{i}"), &format!("{gid}\n"));
                if !gid.starts_with("0000") {
                    let kind = if i % 2 == 0 { "IB/RoCE v1" } else { "RoCE v2" };
                    t.file(&format!("{base}/gid_attrs/types/{i}"), &format!("{kind}\n"));
                    t.file(&format!("{base}/gid_attrs/ndevs/{i}"), &format!("{net}\n"));
                }
            }
        }
        t
    }

    /// The OCI GB200 node of `oci/gb200-roce-dranet` seen from a dranet pod with the RDMA subsystem in shared
    /// network-namespace mode: RDMA devices mlx5_0 … mlx5_8, the claim's eight with their netdevs rdma0 …
    /// rdma7 in the pod and a global IPv6 RoCE v2 GID at index 3, mlx5_4's GIDs on the host's netdev; and the
    /// claim `gpu-nic`'s metadata files (`roce-inspect/tests/fixtures/dra-metadata/`).
    fn gb200_dranet(tag: &str) -> Tree {
        let t = Tree::new(tag);
        let devices = [
            ("mlx5_0", "0000:03:00.0"),
            ("mlx5_1", "0000:03:00.1"),
            ("mlx5_2", "0002:03:00.0"),
            ("mlx5_3", "0002:03:00.1"),
            ("mlx5_4", "0004:01:00.0"),
            ("mlx5_5", "0010:03:00.0"),
            ("mlx5_6", "0010:03:00.1"),
            ("mlx5_7", "0012:03:00.0"),
            ("mlx5_8", "0012:03:00.1"),
        ];
        for (j, (dev, pci)) in devices.iter().enumerate() {
            let function = format!("devices/pci{}:00/{pci}", &pci[..4]);
            let net = match j {
                0..4 => format!("rdma{j}"),
                4 => "enP4p1s0f0".to_string(),
                _ => format!("rdma{}", j - 1),
            };
            if j != 4 {
                t.file(&format!("sys/class/net/{net}/operstate"), "up\n");
                t.file(&format!("sys/{function}/net/{net}/operstate"), "up\n");
            } else {
                std::fs::create_dir_all(t.0.join("sys").join(&function)).unwrap();
            }
            let base = format!("sys/class/infiniband/{dev}");
            std::fs::create_dir_all(t.0.join(&base)).unwrap();
            std::os::unix::fs::symlink(
                format!("../../../{function}"),
                t.0.join(&base).join("device"),
            )
            .unwrap();
            let port = format!("{base}/ports/1");
            t.file(&format!("{port}/state"), "4: ACTIVE\n");
            t.file(&format!("{port}/link_layer"), "Ethernet\n");
            for i in 0..8u32 {
                let gid = match i {
                    0 | 1 => format!("fe80:0000:0000:0000:9c1c:3aff:fe50:{j:04x}"),
                    2 | 3 => format!("2603:c020:0011:{:04x}:0000:0000:0000:0017", 0x100 + j),
                    _ => "0000:0000:0000:0000:0000:0000:0000:0000".to_string(),
                };
                t.file(&format!("{port}/gids/{i}"), &format!("{gid}\n"));
                if i < 4 {
                    let kind = if i % 2 == 0 { "IB/RoCE v1" } else { "RoCE v2" };
                    t.file(&format!("{port}/gid_attrs/types/{i}"), &format!("{kind}\n"));
                    t.file(&format!("{port}/gid_attrs/ndevs/{i}"), &format!("{net}\n"));
                }
            }
        }
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../roce-inspect/tests/fixtures/dra-metadata");
        let claim = "var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu-nic";
        for (request, driver, file) in [
            ("nic", "dra.net", "dranet-gb200-nic-metadata.json"),
            ("gpu", "gpu.nvidia.com", "gpu-gb200-metadata.json"),
        ] {
            let text = std::fs::read_to_string(fixtures.join(file)).unwrap();
            t.file(&format!("{claim}/{request}/{driver}-metadata.json"), &text);
        }
        t
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

/// `roce exec --root TREE ARGS…` with a clean environment (PATH only, plus `env`).
fn roce_exec(tree: &Tree, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roce"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .arg("exec")
        .arg("--root")
        .arg(tree.path())
        .args(args);
    c
}

fn run(tree: &Tree, args: &[&str], env: &[(&str, &str)]) -> Output {
    roce_exec(tree, args, env).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_jobs_exit_status_is_roces() {
    let t = Tree::gb300("status", 10);
    let o = run(&t, &["--", "sh", "-c", "exit 7"], &[]);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o.stderr));
    let o = run(&t, &["--", "true"], &[]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn a_signal_that_kills_the_job_kills_roce() {
    let t = Tree::gb300("signal", 10);
    let o = run(&t, &["--", "sh", "-c", "kill -TERM $$"], &[]);
    const SIGTERM: i32 = 15;
    assert_eq!(o.status.signal(), Some(SIGTERM), "{:?}", o.status);
    assert_eq!(o.status.code(), None);
}

#[test]
fn the_job_replaces_roce_and_gets_the_pods_variables() {
    let t = Tree::gb300("replace", 10);
    let child = roce_exec(
        &t,
        &[
            "--",
            "sh",
            "-c",
            r#"echo "$$"; echo "$NCCL_IB_GID_INDEX"; echo "$NCCL_IB_HCA"; echo "$NCCL_IB_TC""#,
        ],
        &[],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    // Same process: the shell's $$ is the pid roce was started with.
    assert_eq!(lines[0], pid.to_string());
    // The global RoCE v2 GID of this pod is at 11 (10 is its v1 twin).
    assert_eq!(lines[1], "11");
    let hca: Vec<String> = (0..16)
        .map(|k| format!("ibp{}p{}:1", k / 4, k % 4))
        .collect();
    assert_eq!(lines[2], format!("={}", hca.join(",")));
    assert_eq!(lines[3], "96");
    // One line per decision on stderr.
    let err = text(&o.stderr);
    assert!(err.starts_with("roce exec: profile coreweave/gb300-roce (RoCE): 16 of 16 rails usable, GID index 11 (RoCE v2 IPv6 in fd02::/16)\n"), "{err}");
    assert!(err.contains("roce exec: NCCL_IB_GID_INDEX=11 (computed: the RoCE v2 IPv6 in fd02::/16 GID on a netdev of this namespace is at index 11 on 16 usable port(s); the profile sets none)\n"), "{err}");
    assert!(
        err.contains("roce exec: NCCL_IB_TC=96 (from the profile)\n"),
        "{err}"
    );
    assert!(
        err.contains(
            "roce exec: UCX_IB_GID_INDEX not set (UCX mode is tcp: UCX uses no RDMA port)\n"
        ),
        "{err}"
    );
}

#[test]
fn a_variable_set_in_the_environment_wins() {
    let t = Tree::gb300("env", 4);
    let o = run(
        &t,
        &["--", "sh", "-c", r#"echo "$NCCL_IB_GID_INDEX""#],
        &[("NCCL_IB_GID_INDEX", "3")],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "3\n");
    assert!(
        text(&o.stderr).contains(
            "roce exec: NCCL_IB_GID_INDEX=3 (set in the environment, which wins; roce computed 5)\n"
        ),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_pod_without_rdma_devices_never_starts_the_job() {
    let t = Tree::new("nordma");
    let marker = t.path().join("started");
    let m = marker.to_str().unwrap();
    let o = run(&t, &["--", "sh", "-c", &format!("touch {m}")], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!marker.exists(), "the job ran");
    let err = text(&o.stderr);
    assert!(err.contains("roce::exec::no_rdma_devices"), "{err}");
    assert!(err.contains("the job is not started"), "{err}");
    // --dry-run runs nothing either, and says it would not start.
    let o = run(
        &t,
        &["--dry-run", "--", "sh", "-c", &format!("touch {m}")],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!marker.exists(), "the dry run ran the job");
    // --allow-degraded: it starts, with a warning.
    let o = run(
        &t,
        &["--allow-degraded", "--", "sh", "-c", &format!("touch {m}")],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(marker.exists(), "the degraded job did not run");
    let err = text(&o.stderr);
    assert!(err.contains("⚠ no RDMA devices here"), "{err}");
    assert!(
        err.contains("--allow-degraded: the job starts anyway"),
        "{err}"
    );
}

#[test]
fn link_local_only_gids_never_start_the_job() {
    // The "global" pair at 0/1 collides with the link-local pair: only fe80:: entries remain.
    let t = Tree::gb300("linklocal", 0);
    let marker = t.path().join("started");
    let o = run(
        &t,
        &["--", "sh", "-c", &format!("touch {}", marker.display())],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!marker.exists());
    assert!(text(&o.stderr).contains("roce::exec::no_global_gid"));
}

#[test]
fn dry_run_prints_the_decisions_and_the_environment_and_runs_nothing() {
    let t = Tree::gb300("dry", 10);
    let marker = t.path().join("started");
    let m = marker.display().to_string();
    let o = run(
        &t,
        &["--dry-run", "--", "sh", "-c", &format!("touch {m}")],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!marker.exists());
    let out = text(&o.stdout);
    assert!(
        out.starts_with(
            "# roce exec --dry-run: profile coreweave/gb300-roce (RoCE): 16 of 16 rails usable"
        ),
        "{out}"
    );
    assert!(
        out.contains("\n# NCCL_IB_GID_INDEX=11 (computed: "),
        "{out}"
    );
    assert!(out.contains("\nNCCL_IB_GID_INDEX=11\n"), "{out}");
    assert!(out.contains("\nNCCL_IB_HCA='=ibp0p0:1,"), "{out}");
    assert!(
        out.ends_with(&format!("# would run: sh -c 'touch {m}'\n")),
        "{out}"
    );
    // The environment part is what a POSIX shell can source.
    let script = format!("{out}\necho \"$NCCL_IB_HCA|$NCCL_IB_ADDR_RANGE\"\n");
    let sh = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert!(
        text(&sh.stdout).starts_with("=ibp0p0:1,ibp0p1:1,"),
        "{}",
        text(&sh.stdout)
    );
    assert!(text(&sh.stdout).ends_with("|fd02::/16\n"));
    // JSON, without a command: what the lead runs on a machine without RDMA devices.
    let o = run(
        &Tree::new("dryjson"),
        &["--dry-run", "--allow-degraded", "--format", "json"],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["degraded"], true);
    assert_eq!(v["env"]["NCCL_IB_HCA"], "ibp");
    assert_eq!(v["problems"][0]["code"], "roce::exec::no_rdma_devices");
    assert_eq!(v["problems"][0]["severity"], "warning");
    assert_eq!(v["command"], serde_json::json!([]));
    assert_eq!(
        text(&o.stderr),
        "",
        "JSON mode keeps the problems in the object"
    );
}

#[test]
fn a_command_that_cannot_run_exits_127_or_126() {
    let t = Tree::gb300("cannot", 10);
    let o = run(&t, &["--", "/nonexistent/job"], &[]);
    assert_eq!(o.status.code(), Some(127));
    assert!(text(&o.stderr).contains("roce::exec::command_not_found"));
    let o = run(&t, &["--", "no-such-program-anywhere"], &[]);
    assert_eq!(o.status.code(), Some(127));
    let script = t.path().join("job.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let o = run(&t, &["--", script.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(126));
    assert!(text(&o.stderr).contains("roce::exec::command_not_executable"));
    // A directory is not executable either.
    let o = run(&t, &["--", t.path().to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(126));
}

#[test]
fn stdin_and_signal_dispositions_reach_the_job() {
    use std::io::Write;
    let t = Tree::gb300("stdin", 10);
    let mut child = roce_exec(&t, &["--", "cat"], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(text(&o.stdout), "hello\n");
    // Rust ignores SIGPIPE in its own process; the job must start with the default disposition.
    let o = run(&t, &["--", "cat", "/proc/self/status"], &[]);
    let status = text(&o.stdout);
    let ignored = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|v| u64::from_str_radix(v.trim(), 16).unwrap())
        .unwrap();
    assert_eq!(ignored & (1 << (13 - 1)), 0, "SIGPIPE ignored in the job");
}

#[test]
fn a_command_is_required_unless_dry_run() {
    let t = Tree::new("usage");
    let o = run(&t, &[], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let o = Command::new(env!("CARGO_BIN_EXE_roce"))
        .args(["exec", "--profile", "-", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `render --target kustomize --exec` through the CLI: the flag reaches the Component (the build itself is
/// checked with kubectl in roce-render's kustomize tests), `--exec=PATH` names a profile file, `--command`
/// is refused, and the help says which targets take `--exec`.
#[test]
fn render_kustomize_wraps_the_workloads_commands() {
    let roce = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_roce"))
            .env("NO_COLOR", "1")
            .args(args)
            .output()
            .unwrap()
    };
    let t = Tree::new("kustomize");
    let dir = t.path().join("fabric");
    let d = dir.to_str().unwrap();
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/my-team-gb300.kdl");
    let f = file.to_str().unwrap();
    let o = roce(&["render", "-t", "kustomize", "-p", f, "--exec", "-o", d]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("is not a built-in profile"),
        "{}",
        text(&o.stderr)
    );
    let o = roce(&[
        "render",
        "-t",
        "kustomize",
        "-p",
        f,
        "--exec=/etc/roce/team.kdl",
        "-o",
        d,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let steps = std::fs::read_to_string(dir.join("transformers.yaml")).unwrap();
    for (i, word) in [
        "/usr/local/bin/roce",
        "exec",
        "\"--profile\"",
        "/etc/roce/team.kdl",
        "\"--\"",
    ]
    .iter()
    .enumerate()
    {
        let op = format!(
            "  - {{op: add, path: /spec/template/spec/containers/0/command/{i}, value: {word}}}\n"
        );
        assert!(steps.contains(&op), "{op}\n{steps}");
    }
    let patch = std::fs::read_to_string(dir.join("patch-template.yaml")).unwrap();
    assert!(
        patch.contains("        - name: NCCL_IB_HCA\n          $patch: delete\n"),
        "{patch}"
    );

    let o = roce(&[
        "render",
        "-t",
        "kustomize",
        "--exec",
        "--command",
        "x",
        "-o",
        d,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("--command is for the pod target"),
        "{}",
        text(&o.stderr)
    );
    let o = roce(&["render", "--help"]);
    assert!(
        text(&o.stdout).contains("pod, kustomize, dockerfile: start the job behind `roce exec"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn render_and_apply_wrap_the_job() {
    let roce = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_roce"))
            .env("NO_COLOR", "1")
            .args(args)
            .output()
            .unwrap()
    };
    let o = roce(&[
        "render",
        "-t",
        "pod",
        "--exec",
        "--command",
        "python train.py",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let pod = text(&o.stdout);
    assert!(pod.contains("    command:\n    - /usr/local/bin/roce\n    - exec\n    - \"--profile\"\n    - coreweave/gb300-roce\n    - \"--\"\n    args:\n    - sh\n    - \"-c\"\n    - python train.py\n"), "{pod}");
    assert!(!pod.contains("NCCL_IB_HCA"));
    // A profile file is not in the image under its local path: name it with --exec=PATH.
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/my-team-gb300.kdl");
    let f = file.to_str().unwrap();
    let o = roce(&["render", "-t", "pod", "-p", f, "--exec", "--command", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("is not a built-in profile"),
        "{}",
        text(&o.stderr)
    );
    let o = roce(&[
        "render",
        "-t",
        "pod",
        "-p",
        f,
        "--exec=/etc/roce/team.kdl",
        "--command",
        "x",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("    - /etc/roce/team.kdl\n"));
    // apply --exec
    let t = Tree::new("apply");
    let job = t.path().join("job.yaml");
    std::fs::write(
        &job,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: t\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: x\n        command: [python, train.py]\n",
    )
    .unwrap();
    let o = roce(&[
        "apply",
        "--exec",
        job.to_str().unwrap(),
        "-p",
        "coreweave/gb300-roce",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("        - /usr/local/bin/roce\n        - exec\n"),
        "{}",
        text(&o.stdout)
    );
    std::fs::write(&job, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: t\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: x\n").unwrap();
    let o = roce(&[
        "apply",
        "--exec",
        job.to_str().unwrap(),
        "-p",
        "coreweave/gb300-roce",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("roce::exec::cannot_wrap"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_dra_device_metadata_is_the_nic_source_when_present() {
    let t = Tree::gb200_dranet("dra-source");
    let o = run(
        &t,
        &[
            "--profile",
            "oci/gb200-roce-dranet",
            "--dry-run",
            "--format",
            "json",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nic_source"]["source"], "dra_metadata");
    assert_eq!(
        v["nic_source"]["not_allocated"],
        serde_json::json!(["mlx5_4"])
    );
    assert_eq!(
        v["env"]["NCCL_IB_HCA"],
        "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1"
    );
    assert_eq!(
        v["problems"][0]["code"],
        "roce::exec::dra_metadata_disagrees"
    );
    // Starting the job: the source line after the summary, the warning after the decisions, and the job runs.
    let o = run(
        &t,
        &[
            "--profile",
            "oci/gb200-roce-dranet",
            "--",
            "sh",
            "-c",
            "echo $NCCL_IB_HCA",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[1].starts_with("roce exec: NICs from the DRA device metadata (resourceclaimtemplates/gpu-nic/nic/dra.net-metadata.json): mlx5_0, mlx5_1, …, mlx5_8 (8)"),
        "{err}"
    );
    assert!(err.contains("roce::exec::dra_metadata_disagrees"), "{err}");
    assert!(text(&o.stdout).starts_with("=mlx5_0:1,"));
    // Without metadata the JSON says sysfs, and the human output has no source line.
    let t = Tree::gb300("sysfs-source", 10);
    let o = run(&t, &["--dry-run", "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nic_source"]["source"], "sysfs");
    assert_eq!(v["nic_source"]["metadata"], serde_json::Value::Null);
    let o = run(&t, &["--dry-run"], &[]);
    assert!(!text(&o.stdout).contains("NICs from"));
}

/// The example blocks of docs/exec.md are real runs on fixture trees: each is rebuilt here and compared
/// (`ROCE_BLESS=1` rewrites them).
#[test]
fn docs_exec_md_examples_are_current() {
    let doc_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/exec.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    /// The pod of an example.
    enum Pod {
        /// The GB300 RoCE pod with its global GID pair at this index.
        Gb300(u32),
        /// No RDMA devices.
        Empty,
        /// The GB200 dranet pod with its claim's DRA device metadata.
        Gb200Dranet,
    }
    // (marker, pod, shown env, args, show stdout, show stderr)
    type Example<'a> = (
        &'a str,
        Pod,
        &'a [(&'a str, &'a str)],
        &'a [&'a str],
        bool,
        bool,
    );
    let examples: &[Example] = &[
        (
            "gid5",
            Pod::Gb300(4),
            &[],
            &["--dry-run", "--", "python", "train.py"],
            true,
            true,
        ),
        (
            "env",
            Pod::Gb300(4),
            &[("NCCL_IB_GID_INDEX", "11")],
            &["--", "true"],
            false,
            true,
        ),
        (
            "linklocal",
            Pod::Gb300(0),
            &[],
            &["--", "python", "train.py"],
            true,
            true,
        ),
        (
            "degraded",
            Pod::Empty,
            &[],
            &["--dry-run", "--allow-degraded", "--", "python", "train.py"],
            true,
            true,
        ),
        (
            "dra",
            Pod::Gb200Dranet,
            &[],
            &[
                "--profile",
                "oci/gb200-roce-dranet",
                "--dry-run",
                "--",
                "python",
                "train.py",
            ],
            true,
            true,
        ),
    ];
    let mut want = doc.clone();
    for (marker, pod, env, args, show_out, show_err) in examples {
        let tag = format!("doc-{marker}");
        let t = match pod {
            Pod::Gb300(g) => Tree::gb300(&tag, *g),
            Pod::Empty => Tree::new(&tag),
            Pod::Gb200Dranet => Tree::gb200_dranet(&tag),
        };
        let parent = t.path().parent().unwrap().to_path_buf();
        let pod = parent.join(format!("pod-{marker}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&pod);
        std::fs::rename(t.path(), &pod).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_roce"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("NO_COLOR", "1")
            .envs(env.iter().copied())
            .current_dir(&parent)
            .arg("exec")
            .arg("--root")
            .arg(pod.file_name().unwrap())
            .args(*args)
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&pod);
        let shown_env: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        let mut block = format!(
            "```console\n$ {shown_env}roce exec --root pod {}\n",
            args.join(" ")
        );
        if *show_out {
            block.push_str(&text(&o.stdout));
        }
        if *show_err {
            block.push_str(&text(&o.stderr));
        }
        if !block.ends_with('\n') {
            block.push('\n');
        }
        block.push_str("```\n");
        let open = format!("<!-- example:{marker} -->\n");
        let start = want.find(&open).unwrap_or_else(|| panic!("no {open}")) + open.len();
        let end = start + want[start..].find("<!-- /example -->").unwrap();
        want.replace_range(start..end, &block);
    }
    if std::env::var_os("ROCE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&doc_path, &want).unwrap();
        return;
    }
    assert!(
        doc == want,
        "docs/exec.md examples are stale; regenerate with ROCE_BLESS=1 cargo test -p roce-cli --test tests exec::docs_exec_md"
    );
}

/// The one real run, on an H200 machine without RDMA NICs (`crates/roce-inspect/tests/fixtures/exec/h200/`,
/// from `fixtures/exec/capture.sh`): without `--allow-degraded` the job never started (exit 1,
/// `roce::exec::no_rdma_devices`); with it, two PyTorch ranks started behind `roce exec` ran an all-reduce
/// over sockets, rank 1's exit status 3 was roce's, and `roce explain` of their log says why it was not RDMA.
/// Today's binary, on an empty tree (what that machine's `/sys/class/infiniband` held), decides the same.
#[test]
fn the_recorded_h200_run_is_what_roce_exec_does() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../roce-inspect/tests/fixtures/exec/h200");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();

    let failed = read("fail-closed.stderr");
    assert!(failed.contains("roce::exec::no_rdma_devices"), "{failed}");
    assert!(failed.contains("\nexit 1\njob not started\n"), "{failed}");
    assert_eq!(read("exit-status.txt"), "rank 0 exit 0\nrank 1 exit 3\n");

    let log = read("exec-allreduce.log");
    for r in 0..2 {
        assert!(
            log.contains(&format!("rank {r}: all_reduce ok (2.0)")),
            "rank {r}"
        );
    }
    assert!(log.contains("roce exec: NCCL_IB_HCA=ibp (from the profile: no RDMA devices here)"));
    assert!(log.contains("NET/Socket"), "NCCL used its socket transport");
    let explained = read("explain.txt");
    assert!(
        explained.contains("roce::explain::socket_fallback"),
        "{explained}"
    );

    // The same decisions from today's binary: the recorded dry run on a tree with no RDMA devices.
    let tree = Tree::new("h200-replay");
    let out = run(
        &tree,
        &[
            "--profile",
            "coreweave/gb300-roce",
            "--dry-run",
            "--allow-degraded",
            "--",
            "python3",
            "train.py",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), read("dry-run.txt"));
}
