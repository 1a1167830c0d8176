//! Crash-safe writes (issue 32): `roce render -o`, `roce apply --in-place` and `roce sweep plan -o` are
//! killed with SIGKILL at random points, many times. After every kill each file is its old content or its
//! new one (or absent where it was absent), never a part; what a killed run leaves besides is only roce's
//! own temporaries; and the next complete run leaves exactly the new files, its predecessor's temporaries
//! removed. `ROCE_CRASH_RUNS` sets the kills per command (default 40; the long variant: 1000).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every file under `dir`, by path relative to it.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn restore(dir: &Path, state: &BTreeMap<PathBuf, Vec<u8>>) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for (rel, bytes) in state {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

/// roce's temporary files: `.NAME.roce-PID-RANDOM.tmp` (crates/roce-cli/src/io.rs).
fn is_roce_temporary(rel: &Path) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with('.') && name.contains(".roce-") && name.ends_with(".tmp")
}

/// xorshift64*: the kill points, reproducible from the seed the test prints.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A command that writes into `work`, with the old state it starts from.
struct Case {
    name: &'static str,
    args: Vec<String>,
    old: BTreeMap<PathBuf, Vec<u8>>,
}

fn roce(args: &[String], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roce"));
    c.args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn run_case(case: &Case, work: &Path, runs: usize, rng: &mut Rng) {
    // The new state, and how long a whole run takes (the kill points spread over 1.5 times that).
    restore(work, &case.old);
    let start = Instant::now();
    let status = roce(&case.args, work).status().unwrap();
    let took = start.elapsed();
    assert!(status.success(), "{}: the complete run failed", case.name);
    let new = snapshot(work);
    assert_ne!(
        new, case.old,
        "{}: the run must change something",
        case.name
    );
    let span = (took.as_micros() as u64 * 3 / 2).max(200);
    let (mut partial, mut leftovers) = (0, 0);
    for round in 0..runs {
        restore(work, &case.old);
        let mut child = roce(&case.args, work).spawn().unwrap();
        std::thread::sleep(Duration::from_micros(rng.next() % span));
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
        let after = snapshot(work);
        let mut mixed = (false, false);
        if after.keys().any(|k| is_roce_temporary(k)) {
            leftovers += 1;
        }
        for (rel, bytes) in &after {
            if is_roce_temporary(rel) {
                continue;
            }
            let is_old = case.old.get(rel) == Some(bytes);
            let is_new = new.get(rel) == Some(bytes);
            assert!(
                is_old || is_new,
                "{} round {round}: {} is neither its old nor its new content ({} bytes)",
                case.name,
                rel.display(),
                bytes.len()
            );
            mixed.0 |= is_old && !is_new;
            mixed.1 |= is_new && !is_old;
        }
        for rel in case.old.keys() {
            assert!(
                after.contains_key(rel) || new.contains_key(rel),
                "{} round {round}: {} vanished",
                case.name,
                rel.display()
            );
        }
        if mixed.0 && mixed.1 {
            partial += 1;
        }
        // The next complete run finishes the job and removes what the killed one left.
        assert!(roce(&case.args, work).status().unwrap().success());
        let done = snapshot(work);
        let stray: Vec<&PathBuf> = done.keys().filter(|k| !new.contains_key(*k)).collect();
        assert!(
            stray.is_empty(),
            "{} round {round}: a complete run after a kill left {stray:?}",
            case.name
        );
        assert_eq!(done, new, "{} round {round}: the rerun's files", case.name);
    }
    eprintln!(
        "{}: {runs} kills over {span} µs (a complete run takes {} µs): {leftovers} left temporaries (each removed by the next run), {partial} left some files new and others old, every file whole",
        case.name,
        took.as_micros()
    );
}

#[test]
fn killed_writes_leave_old_or_new_files_and_the_next_run_cleans_up() {
    let runs: usize = std::env::var("ROCE_CRASH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash seed {seed}");
    let mut rng = Rng(seed);
    let root = std::env::temp_dir().join(format!("roce-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();

    // render -o: the Kustomize component of one profile over another's.
    roce(
        &s(&[
            "render",
            "--target",
            "kustomize",
            "--profile",
            "coreweave/h100-ib",
            "-o",
            "out",
        ]),
        &work,
    )
    .status()
    .unwrap();
    let render = Case {
        name: "render -o",
        args: s(&[
            "render",
            "--target",
            "kustomize",
            "--profile",
            "coreweave/gb300-roce",
            "-o",
            "out",
        ]),
        old: snapshot(&work),
    };
    run_case(&render, &work, runs, &mut rng);

    // apply --in-place over many manifests: the rendered Pod of one profile, applied with another.
    restore(&work, &BTreeMap::new());
    let pod = Command::new(env!("CARGO_BIN_EXE_roce"))
        .args([
            "render",
            "--target",
            "pod",
            "--profile",
            "coreweave/h100-ib",
        ])
        .output()
        .unwrap()
        .stdout;
    let pod = String::from_utf8(pod).unwrap();
    let mut old = BTreeMap::new();
    let mut args = s(&["apply", "--in-place", "--profile", "coreweave/gb300-roce"]);
    for i in 0..60 {
        let name = format!("m/pod-{i:03}.yaml");
        old.insert(PathBuf::from(&name), pod.clone().into_bytes());
        args.push(name);
    }
    let apply = Case {
        name: "apply --in-place",
        args,
        old,
    };
    run_case(&apply, &work, runs, &mut rng);

    // sweep plan -o: a campaign for 128 nodes over one for 32.
    restore(&work, &BTreeMap::new());
    roce(
        &s(&[
            "sweep",
            "plan",
            "--profile",
            "coreweave/h100-ib",
            "--nodes",
            "gpu[001-032]",
            "--scheduler",
            "slurm",
            "-o",
            "sweep",
        ]),
        &work,
    )
    .status()
    .unwrap();
    let sweep = Case {
        name: "sweep plan -o",
        args: s(&[
            "sweep",
            "plan",
            "--profile",
            "coreweave/h100-ib",
            "--nodes",
            "gpu[001-128]",
            "--scheduler",
            "slurm",
            "-o",
            "sweep",
        ]),
        old: snapshot(&work),
    };
    run_case(&sweep, &work, runs, &mut rng);
    let _ = std::fs::remove_dir_all(&root);
}
