//! Verdicts and severities: the words a phase, a reviewer or a gate uses to
//! say how things stand.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use crate::ValueError;

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

impl Verdict {
    /// The snake_case spelling used in YAML and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Incomplete => "incomplete",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = ValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "approved" => Ok(Self::Approved),
            "rejected" => Ok(Self::Rejected),
            "incomplete" => Ok(Self::Incomplete),
            _ => Err(ValueError::new(
                "verdict",
                s,
                "expected `approved`, `rejected` or `incomplete`",
            )),
        }
    }
}

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

impl Severity {
    /// The snake_case spelling used in YAML and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = ValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "info" => Ok(Self::Info),
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            "critical" => Ok(Self::Critical),
            _ => Err(ValueError::new(
                "severity",
                s,
                "expected `info`, `low`, `medium`, `high` or `critical`",
            )),
        }
    }
}

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
