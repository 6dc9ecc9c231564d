//! What a gate's failure does to the run, as data.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::StrategyParseError;

/// What a failing gate does to the run. The engine reads this enum and never
/// branches per gate: the effect of a phase's results is
/// [`phase_effect`](crate::phase_effect), a pure function.
///
/// | strategy | effect |
/// |---|---|
/// | `halt` | the run stops immediately |
/// | `feed_into_next` | the next attempt consumes the failure as input |
/// | `trigger_replan` | the failure is a critique; the round counter advances |
/// | `informational` | logged and persisted; the run continues unchanged |
///
/// In YAML and JSON the snake_case spellings are written; the upper-case
/// spellings (`HALT`, `FEED_INTO_NEXT`, …) are accepted too.
///
/// ```
/// use orcho_gates::FailStrategy;
///
/// assert_eq!("feed_into_next".parse::<FailStrategy>()?, FailStrategy::FeedIntoNext);
/// assert_eq!("TRIGGER_REPLAN".parse::<FailStrategy>()?, FailStrategy::TriggerReplan);
/// assert_eq!(FailStrategy::Halt.to_string(), "halt");
/// assert!("stop".parse::<FailStrategy>().is_err());
/// # Ok::<(), orcho_gates::StrategyParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[expect(
    clippy::exhaustive_enums,
    reason = "the four strategies are the contract of the effect function; a fifth is a breaking change on purpose"
)]
pub enum FailStrategy {
    /// Informational: recorded, never changes the run. Lowest precedence.
    Informational,
    /// The failure becomes input of the next attempt.
    FeedIntoNext,
    /// The failure is a critique of the plan; replan and advance the round.
    TriggerReplan,
    /// Stop the run. Highest precedence.
    Halt,
}

impl FailStrategy {
    /// Every strategy, from lowest to highest precedence.
    pub const ALL: [Self; 4] = [
        Self::Informational,
        Self::FeedIntoNext,
        Self::TriggerReplan,
        Self::Halt,
    ];

    /// The snake_case spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Halt => "halt",
            Self::FeedIntoNext => "feed_into_next",
            Self::TriggerReplan => "trigger_replan",
            Self::Informational => "informational",
        }
    }
}

impl fmt::Display for FailStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FailStrategy {
    type Err = StrategyParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|strategy| s == strategy.as_str() || s == strategy.as_str().to_ascii_uppercase())
            .ok_or_else(|| StrategyParseError::new(s))
    }
}

impl Serialize for FailStrategy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailStrategy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for s in FailStrategy::ALL {
            assert_eq!(s.as_str().parse::<FailStrategy>().unwrap(), s);
            assert_eq!(
                s.as_str().to_uppercase().parse::<FailStrategy>().unwrap(),
                s
            );
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<FailStrategy>(&json).unwrap(), s);
        }
        assert!(FailStrategy::Halt > FailStrategy::TriggerReplan);
        assert!(FailStrategy::TriggerReplan > FailStrategy::FeedIntoNext);
        assert!(FailStrategy::FeedIntoNext > FailStrategy::Informational);
    }

    #[test]
    fn misspellings_suggest_the_nearest() {
        insta::assert_snapshot!("feed_into_nxt".parse::<FailStrategy>().unwrap_err(), @"unknown fail strategy `feed_into_nxt`: expected `halt`, `feed_into_next`, `trigger_replan` or `informational` (did you mean `feed_into_next`?)");
        insta::assert_snapshot!("Halt".parse::<FailStrategy>().unwrap_err(), @"unknown fail strategy `Halt`: expected `halt`, `feed_into_next`, `trigger_replan` or `informational` (did you mean `halt`?)");
        insta::assert_snapshot!("xyz".parse::<FailStrategy>().unwrap_err(), @"unknown fail strategy `xyz`: expected `halt`, `feed_into_next`, `trigger_replan` or `informational`");
    }
}
