//! The prompt an agent runs a phase with: what its role asks, the phase
//! input, and how to report.

use std::fmt::Write as _;

use orcho::{PhaseRequest, PhaseRole};

use super::AttemptPaths;

/// The prompt for `request`; `orcho` is this program, named in full so
/// that an agent's login shell finds it whatever its `PATH`.
pub(super) fn render(request: &PhaseRequest, paths: &AttemptPaths<'_>, orcho: &str) -> String {
    let mut p = String::new();
    let _ = writeln!(
        p,
        "You run the `{}` phase (attempt {}, round {}) of an Orcho run, in this checkout, with no \
         one to ask: decide for yourself and finish.",
        request.phase, request.attempt, request.round
    );
    p.push('\n');
    p.push_str(
        &role(&request.role, request.read_only)
            .replace("`orcho verify`", &format!("`{orcho} verify`")),
    );
    p.push('\n');
    let input = request.input.to_text();
    if !input.trim().is_empty() {
        p.push('\n');
        // The input's sections are `## ` titles; the prompt's own stay `# `.
        p.push_str(orcho::phase::input_text(&input).trim_end());
        p.push('\n');
    }
    let _ = write!(
        p,
        "\n# How to report\n\n\
         When you are done, report with `{orcho} report '<document>'` (one command, the \
         JSON document in single quotes; it checks the document and writes it to `{output}`, \
         the file ORCHO_OUTPUT names, which you may also write yourself). Give only the fields \
         that apply:\n\
         - \"schema\": 1 (always);\n\
         - \"verdict\": \"approved\", \"rejected\" or \"incomplete\";\n\
         - \"summary\": one line on what you did or found;\n\
         - \"findings\": [{{\"title\": …, \"detail\": …, \"severity\": \"info|low|medium|high|critical\", \"file\": …, \"line\": …}}];\n\
         - \"plan\": {{\"goal\": …, \"steps\": [{{\"role\": \"coder\", \"description\": …}}], \"files_affected\": […], \"risks\": […]}};\n\
         - \"questions\": [{{\"header\": \"a label of 1 to 30 characters\", \"question\": …, \"options\": [{{\"label\": …}}]}}] \
         when you cannot go on without an answer;\n\
         - \"deviation\": {{\"step\": N, \"description\": …, \"error\": …}} when step N of the plan failed \
         and you cannot carry it out.\n\
         `{orcho} schema phase-output` prints the whole schema. Keep notes, drafts and reports that are not \
         the work in `{artifacts}` (ORCHO_ARTIFACTS): they are kept with the run and never delivered.\n",
        output = paths.output,
        artifacts = paths.artifacts,
    );
    p
}

/// What the phase's role asks of the agent.
fn role(role: &PhaseRole, read_only: bool) -> &'static str {
    match role {
        PhaseRole::Plan => {
            "# Your role: plan\n\nPlan the task. Do not change any file of the checkout. Report \
             the plan as `plan` in the output document; if you cannot plan without answers, ask \
             them as `questions` instead."
        }
        PhaseRole::Implement => {
            "# Your role: implement\n\nCarry out the task, following the plan when there is one: \
             change the files of this checkout. Before you finish, prove the work is ready with \
             `orcho verify` (it runs the commands the project requires and records them); you \
             cannot stop while a required one is missing or failed. If a step of the plan fails \
             and you cannot carry it out, report a `deviation`."
        }
        PhaseRole::Review => {
            "# Your role: review\n\nReview the change this run made (`git diff` against the \
             commit the checkout started from, untracked files included) against the task and \
             the plan. Do not change any file. Report `verdict` and, for each problem, a \
             finding."
        }
        PhaseRole::FinalAcceptance => {
            "# Your role: final acceptance\n\nDecide whether the work is ready to deliver, from \
             the task, the plan, the change and the readiness summary below. Do not change any \
             file. Report `verdict` and, for each blocker, a finding."
        }
        _ if read_only => {
            "# Your role\n\nDo what the task asks of this phase without changing any file of the \
             checkout. Report `verdict`, `summary` and findings."
        }
        _ => {
            "# Your role\n\nDo what the task asks of this phase. Report `verdict`, `summary` and \
             findings."
        }
    }
}
