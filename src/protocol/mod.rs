//! The line protocol `referee` speaks with agents (`agent`); `protocol.md` is its
//! authoritative description. The controller protocol of `referee serve` is a mode of
//! its own, in `crate::serve`.

pub mod agent;
