//! A working bubblewrap on this machine, as the probe found it.

use std::path::{Path, PathBuf};

use super::identity::Privilege;

/// A working bubblewrap on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bubblewrap {
    /// The `bwrap` executable.
    pub(super) path: PathBuf,
    /// What `bwrap --version` said, for the record header.
    pub(super) version: String,
    /// How its agents are made unprivileged.
    pub(super) privilege: Privilege,
}

impl Bubblewrap {
    /// `bubblewrap 0.8.0`, as the record header names it.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The `bwrap` executable.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
