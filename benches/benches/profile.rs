//! Loading the built-in `default` profile beside a plain typed parse of the
//! same document, measured in the same run.
//!
//! - `orcho parse+validate+resolve`: `Profile::from_yaml_str` (size and
//!   depth checks, the typed serde_yaml pass, every cross-check) then
//!   `resolve` against the built-in registry (gates built through their
//!   factories, contract validated, autopilot policy built).
//! - `orcho parse+validate`: `Profile::from_yaml_str` alone, to show what
//!   validation costs apart from resolution.
//! - `plain serde_yaml typed parse`: `serde_yaml::from_str::<Profile>` of the
//!   same text, nothing else. Target: at most 1.1x.
//! - `serde_json typed parse (reference)`: the same data as JSON, for scale.
//! - `orcho parse, 900 kB description` beside `plain serde_yaml, 900 kB
//!   description`: a profile near the size cap, one huge scalar, so that a
//!   check that grew with the square of a value's length would show.
//!   Target: at most 1.1x.

use std::hint::black_box;

use criterion::Criterion;
use orcho::{
    gates::GateRegistry,
    profile::{Profile, builtin},
};
use orcho_benches::{Ratio, report_ratios};

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let text = builtin::text("default").expect("the default profile");
    let registry = GateRegistry::with_builtins();
    let json = serde_json::to_string(&Profile::from_yaml_str(text).expect("valid")).expect("json");

    let mut group = c.benchmark_group("profile");
    group.bench_function("orcho parse+validate+resolve", |b| {
        b.iter(|| {
            Profile::from_yaml_str(black_box(text))
                .and_then(|p| p.resolve(&registry))
                .expect("resolves")
        })
    });
    group.bench_function("orcho parse+validate", |b| {
        b.iter(|| Profile::from_yaml_str(black_box(text)).expect("valid"))
    });
    group.bench_function("plain serde_yaml typed parse", |b| {
        b.iter(|| serde_yaml::from_str::<Profile>(black_box(text)).expect("parses"))
    });
    group.bench_function("serde_json typed parse (reference)", |b| {
        b.iter(|| serde_json::from_str::<Profile>(black_box(&json)).expect("parses"))
    });
    let big = format!(
        "schema: 1\nname: big\ndescription: {}\nextends: builtin:quick\n",
        "x".repeat(900_000)
    );
    group.bench_function("orcho parse, 900 kB description", |b| {
        b.iter(|| Profile::from_yaml_str(black_box(&big)).expect("valid"))
    });
    group.bench_function("plain serde_yaml, 900 kB description", |b| {
        b.iter(|| serde_yaml::from_str::<Profile>(black_box(&big)).expect("parses"))
    });
    group.finish();
    c.final_summary();

    report_ratios(&[
        Ratio {
            group: "profile",
            subject: "orcho parse+validate+resolve",
            baseline: "plain serde_yaml typed parse",
            target: 1.10,
        },
        Ratio {
            group: "profile",
            subject: "orcho parse+validate",
            baseline: "plain serde_yaml typed parse",
            target: 1.10,
        },
        Ratio {
            group: "profile",
            subject: "orcho parse+validate+resolve",
            baseline: "serde_json typed parse (reference)",
            target: f64::INFINITY,
        },
        Ratio {
            group: "profile",
            subject: "orcho parse, 900 kB description",
            baseline: "plain serde_yaml, 900 kB description",
            target: 1.10,
        },
    ]);
}
