//! The process's start on glibc Linux, in place of std's runtime set-up (docs/decisions.md, "(startup-6)").
//!
//! Before `fn main`, std installs the handler that turns a stack overflow into a message: on the main
//! thread that is `pthread_getattr_np`, which reads and parses `/proc/self/maps`, and an alternate signal
//! stack mapped with a guard page, about a fifth of a short command's CPU time. `roce` and `kubectl-roce`
//! start at C's `main` instead and do here what else std's set-up did that a command relies on. A stack
//! overflow still stops at the guard page, as a plain `SIGSEGV` without the message.

// The one module of the library that may use `unsafe` (two libc calls; Cargo.toml says why the crate
// denies it rather than forbids it).
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::os::fd::IntoRawFd;

/// Run the command line as [`crate::main`] does and exit with its status: what a `#![no_main]` binary's
/// `main` calls.
pub fn c_main() -> ! {
    open_standard_fds();
    // SAFETY: setting a signal's disposition to `SIG_IGN` runs no code of ours and touches no memory; it
    // is what std's set-up does. A closed pipe is then an error that `report` ignores, not a death by
    // SIGPIPE; `std::process::Command` restores the default disposition in the programs `roce exec` starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // A panic exits 101, as std's runtime makes it; unwinding out of an `extern "C"` function would abort.
    let status = std::panic::catch_unwind(crate::status).unwrap_or(101);
    // `exit` flushes stdout, as std's runtime does after `main` returns.
    std::process::exit(c_int::from(status))
}

/// Descriptors 0, 1 and 2 open, on `/dev/null` where the parent closed one, as std's set-up makes them:
/// otherwise the first file roce opens would become its stdout.
fn open_standard_fds() {
    for fd in 0..3 {
        // SAFETY: `F_GETFD` only asks whether the descriptor is open; it changes nothing.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
        if closed {
            // The lowest free descriptor is `fd`; kept open for the life of the process.
            if let Ok(null) = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")
            {
                let _ = null.into_raw_fd();
            }
        }
    }
}
