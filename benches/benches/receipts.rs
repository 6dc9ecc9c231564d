//! Benchmarks of orcho-receipts (being written).

fn main() {}
