//! `referee`: a headless game referee. It runs bots as processes over a line
//! protocol, enforces the rules and the information hiding of its games, speaks a
//! controller protocol for harnesses, and writes hash-chained game records.

pub mod agent;
pub mod bench;
mod beside;
pub mod builtin;
pub mod cli;
pub mod clock;
pub mod game;
pub mod pbm;
pub mod picture;
pub mod protocol;
pub mod record;
pub mod referee;
pub mod rng;
pub mod serve;
pub mod text;
pub mod tournament;
pub mod wall_clock;
