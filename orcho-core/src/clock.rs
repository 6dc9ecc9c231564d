//! Time: the [`Timestamp`] written on disk and the [`Clock`] seam that lets
//! tests fix it.

use std::{
    fmt,
    str::FromStr,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use serde_with::{DeserializeFromStr, SerializeDisplay};

use crate::ValueError;

/// An instant in UTC with millisecond precision.
///
/// On disk and in JSON a timestamp is an RFC 3339 string with milliseconds,
/// for example `"2026-11-21T23:45:01.123Z"`. Parsing accepts any RFC 3339
/// offset and truncates to milliseconds.
///
/// ```
/// use orcho_core::Timestamp;
///
/// let t: Timestamp = "2026-11-21T23:45:01.123Z".parse()?;
/// assert_eq!(t.unix_millis(), 1_795_304_701_123);
/// assert_eq!(t.to_string(), "2026-11-21T23:45:01.123Z");
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, SerializeDisplay, DeserializeFromStr,
)]
pub struct Timestamp(jiff::Timestamp);

impl Timestamp {
    /// The current system time, truncated to milliseconds.
    pub fn now() -> Self {
        Self::truncate(jiff::Timestamp::now())
    }

    fn truncate(t: jiff::Timestamp) -> Self {
        // In range by construction: the millisecond of a valid timestamp is
        // a valid timestamp.
        Self(jiff::Timestamp::from_millisecond(t.as_millisecond()).unwrap_or(t))
    }

    /// The timestamp `millis` milliseconds after the Unix epoch.
    ///
    /// # Errors
    ///
    /// When `millis` is outside the years -9999 to 9999.
    pub fn from_unix_millis(millis: i64) -> Result<Self, ValueError> {
        jiff::Timestamp::from_millisecond(millis)
            .map(Self)
            .map_err(|_| {
                ValueError::new(
                    "timestamp",
                    millis,
                    "milliseconds out of the supported range",
                )
            })
    }

    /// Milliseconds since the Unix epoch.
    pub fn unix_millis(self) -> i64 {
        self.0.as_millisecond()
    }

    /// This timestamp plus `duration`, or `None` past the supported range.
    pub fn checked_add(self, duration: Duration) -> Option<Self> {
        let millis = i64::try_from(duration.as_millis()).ok()?;
        Self::from_unix_millis(self.unix_millis().checked_add(millis)?).ok()
    }

    /// The time from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn duration_since(self, earlier: Self) -> Option<Duration> {
        let delta = self.unix_millis().checked_sub(earlier.unix_millis())?;
        u64::try_from(delta).ok().map(Duration::from_millis)
    }

    /// The compact, file-name-safe form `YYYYMMDDTHHMMSSmmmZ`, which sorts
    /// like the timestamp.
    pub fn compact_millis(self) -> String {
        self.0
            .strftime("%Y%m%dT%H%M%S%3fZ")
            .to_string()
            .replace('.', "")
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"))
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl FromStr for Timestamp {
    type Err = ValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<jiff::Timestamp>()
            .map(Self::truncate)
            .map_err(|_| {
                ValueError::new(
                    "timestamp",
                    s,
                    "expected an RFC 3339 time such as `2026-11-21T23:45:01.123Z`",
                )
            })
    }
}

/// Where the current time comes from.
///
/// Everything in Orcho that stamps a document takes a `Clock`, so tests and
/// snapshots can use a [`FixedClock`] and get byte-identical output.
pub trait Clock: fmt::Debug + Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

impl<C: Clock + ?Sized> Clock for Box<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct SystemClock;

impl SystemClock {
    /// The system clock.
    pub fn new() -> Self {
        Self
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that stands still until told to move. For tests.
///
/// ```
/// use std::time::Duration;
/// use orcho_core::{Clock, FixedClock, Timestamp};
///
/// let clock = FixedClock::new("2026-01-01T00:00:00Z".parse()?);
/// clock.advance(Duration::from_secs(90));
/// assert_eq!(clock.now().to_string(), "2026-01-01T00:01:30.000Z");
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[derive(Debug)]
pub struct FixedClock {
    now: Mutex<Timestamp>,
}

impl FixedClock {
    /// A clock that reads `now` until changed.
    pub fn new(now: Timestamp) -> Self {
        Self {
            now: Mutex::new(now),
        }
    }

    /// Sets the time.
    pub fn set(&self, now: Timestamp) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = now;
    }

    /// Moves the time forward by `by` (saturating at the end of the range).
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(next) = now.checked_add(by) {
            *now = next;
        }
    }
}

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn text_and_json_round_trip(millis in -62_000_000_000_000i64..253_000_000_000_000i64) {
            let t = Timestamp::from_unix_millis(millis).unwrap();
            prop_assert_eq!(t.to_string().parse::<Timestamp>().unwrap(), t);
            let json = serde_json::to_string(&t).unwrap();
            prop_assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
            prop_assert_eq!(t.compact_millis().len(), 19);
        }
    }

    #[test]
    fn compact_form_sorts_like_time() {
        let a = Timestamp::from_unix_millis(1_000).unwrap();
        let b = Timestamp::from_unix_millis(1_001).unwrap();
        assert_eq!(a.compact_millis(), "19700101T000001000Z");
        assert!(a.compact_millis() < b.compact_millis());
    }

    #[test]
    fn bad_text_is_refused() {
        insta::assert_snapshot!("yesterday".parse::<Timestamp>().unwrap_err(), @"invalid timestamp `yesterday`: expected an RFC 3339 time such as `2026-11-21T23:45:01.123Z`");
        assert!(Timestamp::from_unix_millis(i64::MAX).is_err());
    }
}
