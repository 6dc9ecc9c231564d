//! Verdicts and severities: the words a phase, a reviewer or a gate uses to
//! say how things stand.

use serde::{Deserialize, Serialize};

/// The verdict of a phase or a reviewer.
///
/// ```
/// use orcho_core::Verdict;
///
/// let v: Verdict = "incomplete".parse()?;
/// assert_eq!(v, Verdict::Incomplete);
/// assert_eq!(v.to_string(), "incomplete");
/// assert!("APPROVED".parse::<Verdict>().is_ok(), "upper case is accepted too");
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[expect(
    clippy::exhaustive_enums,
    reason = "a verdict is one of exactly three; hosts match on it exhaustively"
)]
pub enum Verdict {
    /// The work is accepted.
    Approved,
    /// The work is refused; findings say why.
    Rejected,
    /// The work is not finished (or could not be judged).
    Incomplete,
}

crate::spelled!(Verdict as "verdict" {
    Approved => "approved",
    Rejected => "rejected",
    Incomplete => "incomplete",
});

/// How serious a [`Finding`](crate::Finding) is. Severities are ordered:
/// `Info < Low < Medium < High < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[expect(
    clippy::exhaustive_enums,
    reason = "a closed, ordered scale; hosts map it to colours exhaustively"
)]
pub enum Severity {
    /// Worth knowing; never a blocker by itself.
    Info,
    /// A minor problem.
    Low,
    /// A problem that should be fixed.
    Medium,
    /// A problem that blocks acceptance.
    High,
    /// A problem that must stop the run.
    Critical,
}

crate::spelled!(Severity as "severity" {
    Info => "info",
    Low => "low",
    Medium => "medium",
    High => "high",
    Critical => "critical",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for v in [Verdict::Approved, Verdict::Rejected, Verdict::Incomplete] {
            assert_eq!(v.to_string().parse::<Verdict>().unwrap(), v);
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(json, format!("\"{v}\""));
            assert_eq!(serde_json::from_str::<Verdict>(&json).unwrap(), v);
        }
        for s in [
            Severity::Info,
            Severity::Low,
            Severity::Medium,
            Severity::High,
            Severity::Critical,
        ] {
            assert_eq!(s.to_string().parse::<Severity>().unwrap(), s);
            assert_eq!(s.to_string().to_uppercase().parse::<Severity>().unwrap(), s);
        }
        assert!(Severity::Info < Severity::Critical);
    }

    #[test]
    fn unknown_spellings_are_refused() {
        insta::assert_snapshot!("aproved".parse::<Verdict>().unwrap_err(), @"invalid verdict `aproved`: expected `approved`, `rejected` or `incomplete`");
        insta::assert_snapshot!("severe".parse::<Severity>().unwrap_err(), @"invalid severity `severe`: expected `info`, `low`, `medium`, `high` or `critical`");
    }
}
