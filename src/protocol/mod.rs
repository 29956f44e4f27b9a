//! The two line protocols `referee` speaks: with agents (`agent`) and with a
//! controller on its own stdin/stdout (`controller`). `protocol.md` is their
//! authoritative description.

pub mod agent;
pub mod controller;
