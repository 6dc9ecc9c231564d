//! What something cost: wall time always, money and tokens when a model was
//! involved.

use std::{
    fmt,
    iter::Sum,
    ops::{Add, AddAssign},
    time::Duration,
};

use serde::{Deserialize, Serialize};

use crate::ValueError;

/// An amount of US dollars: finite and never negative.
///
/// ```
/// use orcho_core::Usd;
///
/// let usd = Usd::new(0.25)?;
/// assert_eq!(usd.get(), 0.25);
/// assert!(Usd::new(-1.0).is_err());
/// assert!(Usd::new(f64::NAN).is_err());
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Usd(f64);

impl Usd {
    /// Zero dollars.
    pub const ZERO: Self = Self(0.0);

    /// Validates an amount.
    ///
    /// # Errors
    ///
    /// When `amount` is negative, infinite or NaN.
    pub fn new(amount: f64) -> Result<Self, ValueError> {
        if amount.is_finite() && amount >= 0.0 {
            // Normalise -0.0 so that equal amounts serialize equally.
            Ok(Self(amount + 0.0))
        } else {
            Err(ValueError::new(
                "amount in USD",
                amount,
                "expected a finite, non-negative number",
            ))
        }
    }

    /// The amount.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Usd {
    type Error = ValueError;

    fn try_from(value: f64) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<Usd> for f64 {
    fn from(usd: Usd) -> Self {
        usd.0
    }
}

impl Add for Usd {
    type Output = Self;

    fn add(self, rhs: Self) -> Self {
        // The sum of two finite non-negative amounts is non-negative; it can
        // only overflow to infinity, which we clamp.
        Self((self.0 + rhs.0).min(f64::MAX))
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${:.4}", self.0)
    }
}

/// Tokens a model read and wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Tokens {
    /// Prompt (input) tokens.
    pub input: u64,
    /// Completion (output) tokens.
    pub output: u64,
}

impl Tokens {
    /// Input and output token counts.
    pub fn new(input: u64, output: u64) -> Self {
        Self { input, output }
    }

    /// Input plus output.
    pub fn total(self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

impl Add for Tokens {
    type Output = Self;

    fn add(self, rhs: Self) -> Self {
        Self {
            input: self.input.saturating_add(rhs.input),
            output: self.output.saturating_add(rhs.output),
        }
    }
}

/// What a phase, a gate or an advisor call cost.
///
/// Wall time is always known. Money and tokens are known only when a model
/// was involved, so they are optional; a sum keeps them unknown only when
/// every part was unknown.
///
/// On disk: `{"wall_ms": 1200, "usd": 0.013, "tokens": {"input": 900, "output": 120}}`,
/// with wall time in whole milliseconds.
///
/// ```
/// use std::time::Duration;
/// use orcho_core::{Cost, Tokens, Usd};
///
/// let shell = Cost::wall(Duration::from_millis(800));
/// let judge = Cost::wall(Duration::from_millis(1200)).with_usd(Usd::new(0.01)?).with_tokens(Tokens::new(900, 120));
/// let total: Cost = [shell, judge].into_iter().sum();
/// assert_eq!(total.wall, Duration::from_millis(2000));
/// assert_eq!(total.usd, Some(Usd::new(0.01)?));
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "CostRepr", into = "CostRepr")]
#[non_exhaustive]
pub struct Cost {
    /// Wall-clock time.
    pub wall: Duration,
    /// Money spent, when known.
    pub usd: Option<Usd>,
    /// Tokens used, when known.
    pub tokens: Option<Tokens>,
}

impl Cost {
    /// A cost of wall time only.
    pub fn wall(wall: Duration) -> Self {
        Self {
            wall,
            usd: None,
            tokens: None,
        }
    }
}

impl Cost {
    crate::setters! {
        /// Sets the money spent.
        pub fn with_usd(usd: Some(Usd));
        /// Sets the tokens used.
        pub fn with_tokens(tokens: Some(Tokens));
    }
}

fn add_opt<T: Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, None) => a,
        (None, b) => b,
    }
}

impl Add for Cost {
    type Output = Self;

    fn add(self, rhs: Self) -> Self {
        Self {
            wall: self.wall.saturating_add(rhs.wall),
            usd: add_opt(self.usd, rhs.usd),
            tokens: add_opt(self.tokens, rhs.tokens),
        }
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl Sum for Cost {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), Add::add)
    }
}

#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CostRepr {
    wall_ms: u64,
    usd: Option<Usd>,
    tokens: Option<Tokens>,
}

impl From<CostRepr> for Cost {
    fn from(r: CostRepr) -> Self {
        Self {
            wall: Duration::from_millis(r.wall_ms),
            usd: r.usd,
            tokens: r.tokens,
        }
    }
}

impl From<Cost> for CostRepr {
    fn from(c: Cost) -> Self {
        Self {
            wall_ms: u64::try_from(c.wall.as_millis()).unwrap_or(u64::MAX),
            usd: c.usd,
            tokens: c.tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn json_shape() {
        let cost = Cost::wall(Duration::from_millis(1234))
            .with_usd(Usd::new(0.0125).unwrap())
            .with_tokens(Tokens::new(900, 120));
        insta::assert_json_snapshot!(cost, @r#"
        {
          "wall_ms": 1234,
          "usd": 0.0125,
          "tokens": {
            "input": 900,
            "output": 120
          }
        }
        "#);
        insta::assert_json_snapshot!(Cost::wall(Duration::from_millis(7)), @r#"
        {
          "wall_ms": 7
        }
        "#);
    }

    #[test]
    fn negative_money_is_refused_on_read() {
        let err = serde_json::from_str::<Cost>(r#"{"wall_ms": 1, "usd": -3.0}"#).unwrap_err();
        insta::assert_snapshot!(err, @"invalid amount in USD `-3`: expected a finite, non-negative number at line 1 column 27");
    }

    proptest! {
        #[test]
        fn json_round_trips(ms in any::<u32>(), usd in proptest::option::of(0.0f64..1e6), tokens in proptest::option::of((any::<u32>(), any::<u32>()))) {
            let mut cost = Cost::wall(Duration::from_millis(u64::from(ms)));
            cost.usd = usd.map(|u| Usd::new(u).unwrap());
            cost.tokens = tokens.map(|(i, o)| Tokens::new(u64::from(i), u64::from(o)));
            let json = serde_json::to_string(&cost).unwrap();
            prop_assert_eq!(serde_json::from_str::<Cost>(&json).unwrap(), cost);
        }

        #[test]
        fn sums_are_order_independent_in_time_and_tokens(parts in proptest::collection::vec((any::<u16>(), proptest::option::of((any::<u16>(), any::<u16>()))), 0..20)) {
            let costs: Vec<Cost> = parts.iter().map(|(ms, t)| {
                let mut c = Cost::wall(Duration::from_millis(u64::from(*ms)));
                c.tokens = t.map(|(i, o)| Tokens::new(u64::from(i), u64::from(o)));
                c
            }).collect();
            let forward: Cost = costs.iter().copied().sum();
            let backward: Cost = costs.iter().rev().copied().sum();
            prop_assert_eq!(forward.wall, backward.wall);
            prop_assert_eq!(forward.tokens, backward.tokens);
            prop_assert_eq!(forward.tokens.is_some(), costs.iter().any(|c| c.tokens.is_some()));
        }
    }
}
