//! Benchmarks of orcho-handoff (being written).

fn main() {}
