//! Durations written the way people write them: `30s`, `5m`, `1h30m`.

use std::{fmt, str::FromStr, time::Duration};

use serde_with::{DeserializeFromStr, SerializeDisplay};

use crate::DurationError;

/// A duration read and written in a short human form.
///
/// The text form is one or more `<number><unit>` parts with the units `ms`,
/// `s`, `m`, `h` and `d`, for example `250ms`, `30s`, `5m` or `1h30m`.
/// [`Display`](fmt::Display) writes the canonical form, which parses back to
/// the same value. Serde goes through the text form, so a YAML profile says
/// `timeout: 10m`.
///
/// ```
/// use std::time::Duration;
/// use orcho_receipts::HumanDuration;
///
/// let d: HumanDuration = "1h30m".parse()?;
/// assert_eq!(d.get(), Duration::from_secs(5400));
/// assert_eq!(d.to_string(), "1h30m");
/// assert_eq!("90s".parse::<HumanDuration>()?.to_string(), "1m30s");
/// # Ok::<(), orcho_receipts::DurationError>(())
/// ```
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    SerializeDisplay,
    DeserializeFromStr,
)]
pub struct HumanDuration(Duration);

impl HumanDuration {
    /// Wraps a duration. Sub-millisecond parts are dropped.
    pub fn new(duration: Duration) -> Self {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        Self(Duration::from_millis(millis))
    }

    /// The duration.
    pub fn get(self) -> Duration {
        self.0
    }
}

impl From<Duration> for HumanDuration {
    fn from(duration: Duration) -> Self {
        Self::new(duration)
    }
}

impl From<HumanDuration> for Duration {
    fn from(duration: HumanDuration) -> Self {
        duration.0
    }
}

const UNITS: [(&str, u64); 5] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut millis = u64::try_from(self.0.as_millis()).unwrap_or(u64::MAX);
        if millis == 0 {
            return f.write_str("0s");
        }
        for (unit, size) in UNITS {
            let n = millis / size;
            if n > 0 {
                write!(f, "{n}{unit}")?;
                millis %= size;
            }
        }
        Ok(())
    }
}

impl FromStr for HumanDuration {
    type Err = DurationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || DurationError::new(s);
        let text = s.trim();
        if text.is_empty() {
            return Err(err());
        }
        let bytes = text.as_bytes();
        let mut total: u64 = 0;
        let mut i = 0;
        while i < bytes.len() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if start == i {
                return Err(err());
            }
            let n: u64 = text[start..i].parse().map_err(|_| err())?;
            let unit_start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            let size = match &text[unit_start..i] {
                "ms" => 1,
                "s" => 1_000,
                "m" => 60_000,
                "h" => 3_600_000,
                "d" => 86_400_000,
                _ => return Err(err()),
            };
            total = n
                .checked_mul(size)
                .and_then(|v| total.checked_add(v))
                .ok_or_else(err)?;
        }
        Ok(Self(Duration::from_millis(total)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_common_forms() {
        let ms = |s: &str| s.parse::<HumanDuration>().unwrap().get().as_millis();
        assert_eq!(ms("30s"), 30_000);
        assert_eq!(ms("5m"), 300_000);
        assert_eq!(ms("250ms"), 250);
        assert_eq!(ms("1h30m"), 5_400_000);
        assert_eq!(ms("2d"), 172_800_000);
        assert_eq!(ms(" 10s "), 10_000);
        for bad in [
            "",
            "s",
            "10",
            "10x",
            "1.5s",
            "-3s",
            "99999999999999999999d",
            "1 s",
        ] {
            assert!(bad.parse::<HumanDuration>().is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn display_round_trips(millis in 0u64..10_000_000_000_000) {
            let d = HumanDuration::new(Duration::from_millis(millis));
            prop_assert_eq!(d.to_string().parse::<HumanDuration>().unwrap(), d);
            let yaml = serde_json::to_string(&d).unwrap();
            prop_assert_eq!(serde_json::from_str::<HumanDuration>(&yaml).unwrap(), d);
        }

        #[test]
        fn arbitrary_text_never_panics(s in ".{0,30}") {
            let _ = s.parse::<HumanDuration>();
        }
    }
}
