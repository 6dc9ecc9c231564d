//! The stop guard: an agent that wants to stop while the checkout is not
//! proven ready is refused, told what proves it, up to the profile's bound
//! in a row; past it, the stop goes through and is recorded as unproven.
//! What the session is told when it starts.

use std::{fmt::Write as _, sync::Arc};

use camino::Utf8Path;
use orcho::{
    RunPlan,
    core::Digest,
    permissions::{PermissionAction, PermissionPreset, RuleSet},
    receipts::{GapStatus, ReceiptError, VerificationContract, Verifier},
};

use super::{Agent, Answer, HookDoc, StopGuard, UnprovenStop};

/// What stands between the agent and a proven stop ([`assess`]).
pub struct Unproven {
    /// Refusals in a row before the stop goes through.
    max: u32,
    /// What is not proven, as `name: status`.
    items: Vec<String>,
    /// The commands whose receipt cannot be trusted (`invalid`: forged, or
    /// changed after it was signed).
    untrusted: Vec<String>,
    /// The reason for refusal `n` of `max`.
    reason: Box<dyn Fn(u32, u32) -> String>,
}

impl std::fmt::Debug for Unproven {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unproven")
            .field("max", &self.max)
            .field("items", &self.items)
            .field("untrusted", &self.untrusted)
            .finish_non_exhaustive()
    }
}

/// Whether the checkout is proven ready (`None`), or what is not, by
/// `verifier` within the hook's budget (past it, the stop is refused and
/// says why), with what to do said as `rules` let the agent do it; the
/// subject fingerprints it was classified against go to `subjects`.
///
/// # Errors
///
/// The receipts or the checkout that cannot be read.
pub fn assess(
    plan: &RunPlan,
    verifier: &Arc<Verifier>,
    rules: Option<&RuleSet>,
    subjects: &mut Vec<Digest>,
) -> Result<Option<Unproven>, ReceiptError> {
    // The checkout is fingerprinted within the hook's budget, so that the
    // agent never lets a stop through because the hook timed out: past it,
    // the stop is refused, and says why.
    let budget = hook_budget();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = Arc::clone(verifier);
    std::thread::spawn(move || {
        let _ = tx.send(worker.readiness());
    });
    let summary = match rx.recv_timeout(budget) {
        Ok(summary) => {
            let summary = summary?;
            subjects.clone_from(&summary.subjects);
            summary
        }
        Err(_) => {
            let seconds = budget.as_secs_f64();
            return Ok(Some(Unproven {
                max: plan.max_stop_blocks,
                items: vec![format!(
                    "the checkout: not fingerprinted within {seconds} s"
                )],
                untrusted: Vec::new(),
                reason: Box::new(move |refusal, max| {
                    format!(
                        "Orcho: this checkout could not be fingerprinted within the hook's {seconds} \
                         s, so whether it is proven ready is unknown and the stop is refused. \
                         Run `orcho status` (it says what is missing or stale) and `orcho verify`, \
                         then finish; if the tree is this large, tell the user: files the build \
                         writes belong in .gitignore. {}",
                        refusals(refusal, max)
                    )
                }),
            }));
        }
    };
    let gaps = summary.gaps();
    if gaps.is_empty() {
        return Ok(None);
    }
    // Under permission rules that do not let the agent run `orcho verify`,
    // the reason says who can.
    let may_verify = |name: &str| {
        rules.is_none_or(|rules| {
            rules
                .evaluate("bash", &format!("orcho verify {name}"))
                .action
                == PermissionAction::Allow
        })
    };
    let lines: Vec<String> = gaps
        .iter()
        .map(|gap| {
            let name = gap.command().as_str();
            let prove = if may_verify(name) {
                // Running it again changes nothing while it fails or runs
                // no test: what to do first is said.
                match gap.status() {
                    GapStatus::Failed => {
                        format!("Fix what fails, then prove it: `orcho verify {name}`")
                    }
                    GapStatus::Vacuous => format!(
                        "It ran no test: make it run the tests (`orcho verify {name}` says how \
                         it was read), then prove it"
                    ),
                    _ => format!("Prove it: `orcho verify {name}`"),
                }
            } else {
                format!(
                    "Ask a person to run `orcho verify {name}`: the permission rules here do not \
                     let you"
                )
            };
            let distrust = if gap.status() == GapStatus::Invalid {
                " A receipt cannot be trusted: it was not written by `orcho verify` with this \
                 machine's key, or was changed since; if you did not touch it, tell the user."
            } else {
                ""
            };
            format!(
                "- `{name}` (`{}`): {}: {}.{distrust} {prove}",
                command_line(verifier.contract(), name),
                gap.status(),
                gap.reason()
            )
        })
        .collect();
    let untrusted: Vec<String> = gaps
        .iter()
        .filter(|g| g.status() == GapStatus::Invalid)
        .map(|g| g.command().to_string())
        .collect();
    Ok(Some(Unproven {
        max: plan.max_stop_blocks,
        items: gaps
            .iter()
            .map(|g| format!("{}: {}", g.command(), g.status()))
            .collect(),
        untrusted,
        reason: Box::new(move |refusal, max| {
            format!(
                "Orcho: this checkout is not proven ready, so do not stop yet. Required commands \
                 without a present receipt:\n{}\nProve each (it runs the declared command and \
                 records a receipt), fix what fails, and then finish. {}",
                lines.join("\n"),
                refusals(refusal, max)
            )
        }),
    }))
}

/// How long the stop guard takes at most to fingerprint the checkout:
/// `ORCHO_HOOK_BUDGET` seconds, by default three quarters of the timeout
/// `orcho init` writes with every hook, and never closer than 5 s to it.
fn hook_budget() -> std::time::Duration {
    budget_of(crate::env_text("ORCHO_HOOK_BUDGET").as_deref())
}

/// The budget `text` says (seconds), else the default.
fn budget_of(text: Option<&str>) -> std::time::Duration {
    let default = std::time::Duration::from_secs(super::HOOK_TIMEOUT_SECS * 3 / 4);
    // Never as long as the timeout: past it, the agent lets the stop through.
    let most = std::time::Duration::from_secs(super::HOOK_TIMEOUT_SECS - 5);
    text.and_then(|text| text.trim().parse::<f64>().ok())
        .and_then(|secs| std::time::Duration::try_from_secs_f64(secs).ok())
        .map_or(default, |budget| budget.min(most))
}

fn refusals(refusal: u32, max: u32) -> String {
    format!(
        "(Refusal {refusal} of {max}; after {max} in a row the stop goes through and is \
         recorded as unproven.)"
    )
}

/// The stop guard's answer: refuse while `assessed` says the checkout is
/// not proven (or, as `Err`, that the profile does not load: the text
/// says why), up to the profile's bound in a row (the default bound when
/// it does not load); past it, the stop goes through and is recorded as
/// unproven in `store`. `weakened` says what the change does to weaken
/// its own proof, each in one line: said with a refusal, and with a
/// proven stop as a warning.
///
/// # Errors
///
/// The stop guard's records that cannot be kept.
pub fn stop(
    agent: Agent,
    store: &Utf8Path,
    doc: &HookDoc,
    active: bool,
    assessed: Result<Option<Unproven>, String>,
    weakened: &[String],
) -> Result<Answer, crate::Error> {
    let guard = StopGuard::new(store, doc.session_id.as_deref(), doc.agent_id.as_deref());
    let unproven = match assessed {
        Ok(None) => {
            guard.reset();
            // A proven stop: what earlier stops left unproven is proven now.
            let _ = super::acknowledge_stops(store);
            if weakened.is_empty() {
                return Ok(Answer::Silent);
            }
            return Ok(Answer::WarnStop {
                message: format!(
                    "orcho: the receipts are present, but this change weakens its own proof, and \
                     it is not ready until a person reviews it (`orcho status` lists it; tell the \
                     user): {}",
                    weakened.join("; ")
                ),
            });
        }
        Ok(Some(mut unproven)) => {
            if !weakened.is_empty() {
                let reason = unproven.reason;
                let said = weakened.join("; ");
                unproven.reason = Box::new(move |refusal, max| {
                    format!(
                        "{} This change also weakens its own proof, which a person must review \
                         (say so to the user; do not hide it to get past this): {said}",
                        reason(refusal, max)
                    )
                });
            }
            unproven
        }
        Err(message) => Unproven {
            max: orcho::profile::DEFAULT_MAX_STOP_BLOCKS,
            items: vec!["the profile: does not load".to_owned()],
            untrusted: Vec::new(),
            reason: Box::new(move |refusal, max| {
                format!(
                    "Orcho: nothing here can be proven while the profile does not load: \
                         {message}. Tool calls are refused until it loads, so you cannot fix it: \
                         tell the user what is wrong (`orcho profile show` says where). {}",
                    refusals(refusal, max)
                )
            }),
        },
    };
    let blocks = if active { guard.blocks() } else { 0 };
    let max = unproven.max;
    if blocks >= max {
        guard.record(&UnprovenStop::new(
            agent.as_str(),
            doc.session_id.clone(),
            blocks,
            unproven.items.clone(),
        ))?;
        guard.reset();
        // A receipt that cannot be trusted is said first: it may be forged.
        let distrust = if unproven.untrusted.is_empty() {
            String::new()
        } else {
            format!(
                "; a receipt cannot be trusted ({}: invalid, forged or changed after it was \
                 signed)",
                unproven.untrusted.join(", ")
            )
        };
        return Ok(Answer::WarnStop {
            message: format!(
                "orcho: stopped without proof after {blocks} refusal(s): {}{distrust}; recorded \
                 for `orcho status` (`orcho verify` proves the commands)",
                unproven.items.join(", ")
            ),
        });
    }
    guard.refused(blocks + 1)?;
    Ok(Answer::BlockStop {
        reason: (unproven.reason)(blocks + 1, max),
    })
}

/// The declared command line of `name`, quoted as a shell would read it.
fn command_line(contract: &VerificationContract, name: &str) -> String {
    contract
        .command(name)
        .and_then(|spec| shlex::try_join(spec.argv.iter().map(String::as_str)).ok())
        .unwrap_or_default()
}

/// What the agent is told when a session starts.
pub fn session_context(plan: &RunPlan, preset: Option<PermissionPreset>) -> String {
    let mut out = String::from("This project uses Orcho: readiness is proven by receipts, ");
    out.push_str("not by saying so. ");
    match &plan.verification {
        Some(contract) if !contract.required.is_empty() => {
            let commands: Vec<String> = contract
                .required
                .iter()
                .map(|name| {
                    let argv = command_line(contract, name.as_str());
                    format!("`{name}` (`{argv}`)")
                })
                .collect();
            let _ = write!(
                out,
                "Before you finish, every required command must have a present receipt for the \
                 checkout as it is: {}. `orcho verify` runs them and records receipts; \
                 `orcho status` shows what is missing, failed or stale. A stop is refused while \
                 one is not present. Commands you run yourself are logged as exploratory and \
                 prove nothing.",
                commands.join(", ")
            );
        }
        _ => out.push_str("This profile declares no required verification commands."),
    }
    if preset.is_some() || plan.permissions.is_some() {
        out.push_str(
            " Tool calls are checked against permission rules (`orcho permissions check` \
             explains a decision); a denied call is not a bug to work around.",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_budget_stays_below_the_hooks_timeout_whatever_it_is_set_to() {
        assert_eq!(budget_of(None), Duration::from_secs(45));
        assert_eq!(budget_of(Some("0")), Duration::ZERO);
        assert_eq!(budget_of(Some(" 2.5 ")), Duration::from_millis(2500));
        // Past the timeout the agent would let the stop through.
        assert_eq!(budget_of(Some("90")), Duration::from_secs(55));
        // Too large for a duration, negative, or not a number: no panic.
        assert_eq!(budget_of(Some("1e20")), Duration::from_secs(45));
        assert_eq!(budget_of(Some("-1")), Duration::from_secs(45));
        assert_eq!(budget_of(Some("NaN")), Duration::from_secs(45));
        assert_eq!(budget_of(Some("soon")), Duration::from_secs(45));
    }
}
