//! The arguments of `orcho mcp`'s tools: reading any JSON for any tool
//! never panics, and an object with a field no tool knows is refused.
#![no_main]

use libfuzzer_sys::fuzz_target;

const TOOLS: [&str; 13] = [
    "orcho_run_start",
    "orcho_run_status",
    "orcho_run_evidence",
    "orcho_phase_handoff_decide",
    "orcho_run_resume",
    "orcho_handoff_advice",
    "orcho_review_paused_run",
    "orcho_delivery_gate",
    "orcho_delivery_decide",
    "orcho_touchpoint",
    "orcho_touchpoint_answer",
    "orcho_intake_gate",
    "orcho_intake_decide",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, json)) = data.split_first() else {
        return;
    };
    let tool = TOOLS[usize::from(selector) % TOOLS.len()];
    let accepted = orcho_cli::fuzzing::mcp_arguments(tool, json).is_ok();
    if accepted
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(json)
    {
        assert!(!map.contains_key("no_such_field_anywhere"), "{tool} accepted an unknown field");
    }
});
