//! Read-only access to a host's files under a root directory.
//!
//! Every path `doctor` reads is absolute on the host (`/sys/class/infiniband`, `/proc/self/status`) and is
//! re-based onto [`Root`], so `Root::new("/")` probes the live system and `Root::new(fixture)` a tree built
//! by a test. Nothing here writes, follows a symlink out of the root on purpose, or needs privileges.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Most bytes read from one ordinary file (sysfs attributes are a page at most).
pub(super) const READ_LIMIT: u64 = 64 * 1024;

/// Most bytes read from `/proc/self/environ`.
pub(super) const ENVIRON_LIMIT: u64 = 1024 * 1024;

/// A directory that stands for `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    base: PathBuf,
}

impl Root {
    /// Re-base every read onto `base` (`/` for the live host).
    pub fn new(base: impl Into<PathBuf>) -> Self {
        Root { base: base.into() }
    }

    /// The directory standing for `/`.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Is this the live host's `/`?
    pub fn is_host(&self) -> bool {
        self.base == Path::new("/")
    }

    /// The real path of a host path: `/sys/x` → `<base>/sys/x`.
    ///
    /// ```
    /// use roce_inspect::doctor::Root;
    /// let root = Root::new("/tmp/tree");
    /// assert_eq!(root.path("/sys/class/net"), std::path::Path::new("/tmp/tree/sys/class/net"));
    /// ```
    pub fn path(&self, host_path: &str) -> PathBuf {
        self.base.join(host_path.trim_start_matches('/'))
    }

    /// A file's bytes, at most `limit` of them; `None` when it cannot be read (absent, `EINVAL` from
    /// sysfs for an empty GID entry, permission).
    pub fn read_bytes(&self, host_path: &str, limit: u64) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        File::open(self.path(host_path))
            .ok()?
            .take(limit)
            .read_to_end(&mut out)
            .ok()?;
        Some(out)
    }

    /// A text file with surrounding whitespace trimmed (sysfs values end in a newline).
    pub fn read(&self, host_path: &str) -> Option<String> {
        let bytes = self.read_bytes(host_path, READ_LIMIT)?;
        Some(String::from_utf8_lossy(&bytes).trim().to_string())
    }

    /// A short attribute (a GID, a type, a netdev name: under 256 bytes), trimmed. Reads until a
    /// newline, the end of the file or 256 bytes, so a sysfs attribute costs one `read` call — the GID
    /// tables are thousands of files.
    pub fn read_attr(&self, host_path: &str) -> Option<String> {
        let mut file = File::open(self.path(host_path)).ok()?;
        let mut buf = [0u8; 256];
        let mut len = 0;
        while len < buf.len() {
            let n = file.read(&mut buf[len..]).ok()?;
            len += n;
            if n == 0 || buf[..len].ends_with(b"\n") {
                break;
            }
        }
        Some(String::from_utf8_lossy(&buf[..len]).trim().to_string())
    }

    /// Names in a directory, unsorted; `None` when it cannot be listed.
    pub fn list_unsorted(&self, host_path: &str) -> Option<Vec<String>> {
        Some(
            std::fs::read_dir(self.path(host_path))
                .ok()?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
        )
    }

    /// Names in a directory, in natural order (`mlx5_2` before `mlx5_10`); `None` when it cannot be
    /// listed.
    pub fn list(&self, host_path: &str) -> Option<Vec<String>> {
        let mut names = self.list_unsorted(host_path)?;
        names.sort_by_cached_key(|n| natural_key(n));
        Some(names)
    }

    /// Does the path exist (following symlinks)?
    pub fn exists(&self, host_path: &str) -> bool {
        self.path(host_path).exists()
    }

    /// Where a symlink points, as written in the link.
    pub fn read_link(&self, host_path: &str) -> Option<PathBuf> {
        std::fs::read_link(self.path(host_path)).ok()
    }
}

/// A sort key that orders digit runs by value: `ibp2` < `ibp10`, `mlx5_9` < `mlx5_10`.
pub(super) fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            let mut digits = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(d);
                chars.next();
            }
            let value = digits.parse::<u64>().unwrap_or(u64::MAX);
            out.push((std::mem::take(&mut text), value));
        } else {
            text.push(c);
            chars.next();
        }
    }
    if !text.is_empty() {
        out.push((text, 0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec!["mlx5_10", "mlx5_2", "ibp10", "ibp2", "ibp0p1", "ibp0p0"];
        v.sort_by_key(|a| natural_key(a));
        assert_eq!(
            v,
            ["ibp0p0", "ibp0p1", "ibp2", "ibp10", "mlx5_2", "mlx5_10"]
        );
    }

    #[test]
    fn paths_are_rebased() {
        let root = Root::new("/x");
        assert_eq!(
            root.path("/proc/self/status"),
            Path::new("/x/proc/self/status")
        );
        assert_eq!(root.path("proc"), Path::new("/x/proc"));
        assert!(Root::new("/").is_host());
    }
}
