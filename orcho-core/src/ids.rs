//! Validated identifiers.
//!
//! Ids end up as file and directory names in the run store, so every way to
//! make one — [`new`](RunId::new), [`FromStr`](std::str::FromStr), `Deserialize` — goes through
//! the same validation. The rules keep an id to one portable path component:
//!
//! - not empty and at most [`MAX_ID_LEN`] bytes;
//! - no `..` anywhere and no leading `.`;
//! - no `/`, `\`, control characters, whitespace, or the characters
//!   `:`, `*`, `?`, `"`, `<`, `>`, `|` that some file systems refuse.
//!
//! Everything else (letters in any script, digits, `-`, `_`, `.`, `+`, `@`, …)
//! is allowed.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::{Clock, IdError, IdErrorReason, Timestamp};

/// The longest id, in bytes.
pub const MAX_ID_LEN: usize = 128;

/// The rule of Orcho's ids (see the [module docs](self)), for [`id_type!`](crate::id_type):
/// `id_kind` is what the value is called in the error.
///
/// # Errors
///
/// An [`IdError`] naming the rule `value` breaks.
pub fn validate(id_kind: &'static str, value: &str) -> Result<(), IdError> {
    let fail = |reason| Err(IdError::new(id_kind, value, reason));
    if value.is_empty() {
        return fail(IdErrorReason::Empty);
    }
    if value.len() > MAX_ID_LEN {
        return fail(IdErrorReason::TooLong {
            len: value.len(),
            max: MAX_ID_LEN,
        });
    }
    if let Some(c) = value.chars().find(|&c| is_forbidden(c)) {
        return fail(IdErrorReason::ForbiddenChar(c));
    }
    if value.contains("..") {
        return fail(IdErrorReason::DotDot);
    }
    if value.starts_with('.') {
        return fail(IdErrorReason::LeadingDot);
    }
    Ok(())
}

fn is_forbidden(c: char) -> bool {
    c.is_control()
        || c.is_whitespace()
        || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|')
}

/// Defines a validated string newtype: an id or a name that is safe to use
/// as one path component.
///
/// The type gets `new` (which validates), `as_str`, a `KIND` constant (what
/// the value is called in messages), `Display`, `Debug`, `FromStr`,
/// `TryFrom<String>`, `Into<String>`, `AsRef<str>`, `Borrow<str>`,
/// comparisons with `str`, and serde through the string — every way to
/// build one goes through `validate`, a `fn(&'static str, &str) ->
/// Result<(), Error>` that receives the `KIND` and the value.
///
/// Orcho's ids ([`RunId`], [`HandoffId`], …) are defined with it, with
/// [`validate`] as the rule; crates with stricter rules pass their own.
///
/// ```
/// use orcho_core::{IdError, id_type, ids::validate};
///
/// id_type! {
///     /// Names a reviewer.
///     pub struct ReviewerName("reviewer name") validated by validate, error IdError;
/// }
///
/// let name: ReviewerName = "alice".parse()?;
/// assert_eq!(name, "alice");
/// assert_eq!("a/b".parse::<ReviewerName>().unwrap_err().to_string(),
///            "invalid reviewer name `a/b`: contains `/`, which ids may not contain");
/// assert!(serde_json::from_str::<ReviewerName>("\"..\"").is_err());
/// # Ok::<(), IdError>(())
/// ```
#[macro_export]
macro_rules! id_type {
    ($(#[$meta:meta])* $vis:vis struct $name:ident($kind:literal) validated by $validate:path, error $err:ty;) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis struct $name(String);

        impl $name {
            /// What this value is called in error messages.
            pub const KIND: &'static str = $kind;

            /// Validates `value` and wraps it.
            ///
            /// # Errors
            ///
            /// The validation error, naming the rule the value breaks.
            pub fn new(value: impl Into<String>) -> Result<Self, $err> {
                let value = value.into();
                $validate($kind, &value)?;
                Ok(Self(value))
            }

            /// The value as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $err;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = $err;

            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::new(value)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl ::std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                let value = <String as $crate::__private::serde::Deserialize>::deserialize(deserializer)?;
                Self::new(value).map_err(<D::Error as $crate::__private::serde::de::Error>::custom)
            }
        }
    };
}

id_type! {
    /// Identifies one run. Generated ids sort by creation time.
    ///
    /// ```
    /// use orcho_core::{FixedClock, RunId, Timestamp};
    ///
    /// let clock = FixedClock::new("2026-11-21T23:45:01.123Z".parse::<Timestamp>()?);
    /// let first = RunId::generate(&clock);
    /// let second = RunId::generate(&clock);
    /// assert!(first < second, "ids from one process sort in creation order");
    /// assert!(first.as_str().starts_with("20261121T234501123Z-"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub struct RunId("run id") validated by validate, error IdError;
}

id_type! {
    /// Identifies one handoff (a typed pause) within the store.
    pub struct HandoffId("handoff id") validated by validate, error IdError;
}

id_type! {
    /// Names a phase of a profile, for example `implement`.
    pub struct PhaseName("phase name") validated by validate, error IdError;
}

id_type! {
    /// Names a gate of a phase, for example `tests`.
    pub struct GateName("gate name") validated by validate, error IdError;
}

/// The millisecond of the last id generated by this process, so that ids from
/// one process strictly increase even when the clock stands still or steps
/// back.
static LAST_GENERATED_MS: AtomicI64 = AtomicI64::new(i64::MIN);

/// Returns a millisecond strictly after every one returned before in this
/// process, and at least `now`.
fn next_millis(now: i64) -> i64 {
    let mut last = LAST_GENERATED_MS.load(Ordering::Relaxed);
    loop {
        let next = now.max(last.saturating_add(1));
        match LAST_GENERATED_MS.compare_exchange_weak(
            last,
            next,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

/// 64 random bits from the standard library's per-process randomly keyed
/// hasher, so that ids from two processes in the same millisecond differ.
fn random_u64(salt: i64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_i64(salt);
    hasher.write_u32(std::process::id());
    hasher.finish()
}

impl RunId {
    /// Generates a new run id: `YYYYMMDDTHHMMSSmmmZ-` followed by 16 random
    /// hex digits, for example `20261121T234501123Z-3f9a2c1b7d0e4a55`.
    ///
    /// Ids sort by their creation time at millisecond resolution. Within one
    /// process they strictly increase: when the clock has not moved (or moved
    /// back) since the previous id, the time part is advanced by one
    /// millisecond instead.
    pub fn generate(clock: &dyn Clock) -> Self {
        let now = clock.now().unix_millis();
        let millis = next_millis(now);
        let stamp = Timestamp::from_unix_millis(millis)
            .unwrap_or_else(|_| clock.now())
            .compact_millis();
        let id = format!("{stamp}-{:016x}", random_u64(millis));
        debug_assert!(validate(Self::KIND, &id).is_ok());
        Self(id)
    }

    /// When the run was created, read from a generated id's time part;
    /// `None` for an id not made by [`generate`](Self::generate).
    ///
    /// ```
    /// use orcho_core::RunId;
    ///
    /// let run: RunId = "20261121T234501123Z-3f9a2c1b7d0e4a55".parse()?;
    /// assert_eq!(run.created_at().map(|t| t.to_string()).as_deref(), Some("2026-11-21T23:45:01.123Z"));
    /// assert_eq!("my-run".parse::<RunId>()?.created_at(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn created_at(&self) -> Option<Timestamp> {
        let stamp = self.0.split_once('-').map_or(self.0.as_str(), |(s, _)| s);
        let b = stamp.as_bytes();
        let digits = |r: std::ops::Range<usize>| {
            b.get(r.clone())
                .filter(|d| d.iter().all(u8::is_ascii_digit))
                .map(|_| &stamp[r])
        };
        if b.len() != 19 || b[8] != b'T' || b[18] != b'Z' {
            return None;
        }
        let text = format!(
            "{}-{}-{}T{}:{}:{}.{}Z",
            digits(0..4)?,
            digits(4..6)?,
            digits(6..8)?,
            digits(9..11)?,
            digits(11..13)?,
            digits(13..15)?,
            digits(15..18)?
        );
        text.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FixedClock;
    use proptest::prelude::*;

    fn valid_id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]{0,100}".prop_filter("no ..", |s| !s.contains(".."))
    }

    proptest! {
        #[test]
        fn valid_ids_round_trip(value in valid_id()) {
            let id = RunId::new(value.clone()).unwrap();
            prop_assert_eq!(&id.to_string(), &value);
            prop_assert_eq!(&id.as_str().parse::<RunId>().unwrap(), &id);
            let json = serde_json::to_string(&id).unwrap();
            prop_assert_eq!(serde_json::from_str::<RunId>(&json).unwrap(), id);
            prop_assert!(GateName::new(value.clone()).is_ok());
            prop_assert!(PhaseName::new(value.clone()).is_ok());
            prop_assert!(HandoffId::new(value).is_ok());
        }

        #[test]
        fn ids_with_a_separator_are_refused(a in valid_id(), b in valid_id(), sep in prop::sample::select(vec!["/", "\\", "..", "\0", "\n", " ", ":"])) {
            let value = format!("{a}{sep}{b}");
            prop_assert!(RunId::new(value.clone()).is_err());
            prop_assert!(serde_json::from_str::<PhaseName>(&serde_json::to_string(&value).unwrap()).is_err());
        }

        #[test]
        fn arbitrary_strings_never_panic(value in any::<String>()) {
            if let Ok(id) = GateName::new(value) {
                prop_assert!(!id.as_str().contains(".."));
                prop_assert!(!id.as_str().contains('/'));
                prop_assert!(id.as_str().len() <= MAX_ID_LEN);
            }
        }
    }

    #[test]
    fn hostile_ids_are_refused_with_the_reason() {
        let cases: [(&str, IdErrorReason); 9] = [
            ("", IdErrorReason::Empty),
            ("..", IdErrorReason::DotDot),
            ("a/..", IdErrorReason::ForbiddenChar('/')),
            ("a..b", IdErrorReason::DotDot),
            ("a/b", IdErrorReason::ForbiddenChar('/')),
            ("a\\b", IdErrorReason::ForbiddenChar('\\')),
            ("nul\0byte", IdErrorReason::ForbiddenChar('\0')),
            (".hidden", IdErrorReason::LeadingDot),
            ("tab\there", IdErrorReason::ForbiddenChar('\t')),
        ];
        for (value, reason) in cases {
            let err = RunId::new(value).unwrap_err();
            assert_eq!(err.reason(), &reason, "{value:?}");
        }
        let long = "x".repeat(10_000);
        let err = RunId::new(long).unwrap_err();
        assert_eq!(
            err.reason(),
            &IdErrorReason::TooLong {
                len: 10_000,
                max: MAX_ID_LEN
            }
        );
        assert!(err.to_string().len() < 200, "the message stays short");
    }

    #[test]
    fn error_messages() {
        let msg = |v: &str| PhaseName::new(v).unwrap_err().to_string();
        insta::assert_snapshot!(msg(""), @"invalid phase name ``: is empty");
        insta::assert_snapshot!(msg("a/b"), @"invalid phase name `a/b`: contains `/`, which ids may not contain");
        insta::assert_snapshot!(msg("../x"), @"invalid phase name `../x`: contains `/`, which ids may not contain");
        insta::assert_snapshot!(msg("x..y"), @"invalid phase name `x..y`: contains `..`");
        insta::assert_snapshot!(msg(".x"), @"invalid phase name `.x`: starts with `.`");
        insta::assert_snapshot!(msg("a\0b"), @r"invalid phase name `a\0b`: contains the control character '\0'");
        insta::assert_snapshot!(msg("two words"), @"invalid phase name `two words`: contains whitespace (' ')");
        insta::assert_snapshot!(msg(&"y".repeat(200)), @"invalid phase name `yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy…`: is 200 bytes long, more than 128");
        let json_err = serde_json::from_str::<GateName>(r#""te/sts""#).unwrap_err();
        insta::assert_snapshot!(json_err, @"invalid gate name `te/sts`: contains `/`, which ids may not contain");
    }

    #[test]
    fn generated_ids_increase_under_a_stopped_clock() {
        let clock = FixedClock::new(Timestamp::from_unix_millis(1_700_000_000_000).unwrap());
        let ids: Vec<RunId> = (0..100).map(|_| RunId::generate(&clock)).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{:?} < {:?}", pair[0], pair[1]);
        }
    }

    #[test]
    fn generated_ids_sort_by_time() {
        let early = FixedClock::new(Timestamp::from_unix_millis(4_000_000_000_000).unwrap());
        let a = RunId::generate(&early);
        early.advance(std::time::Duration::from_secs(3600));
        let b = RunId::generate(&early);
        assert!(a < b);
        let text = a.as_str();
        assert_eq!(text.len(), 19 + 1 + 16, "{text}");
        assert_eq!(&text[8..9], "T");
        assert_eq!(&text[18..20], "Z-");
    }
}
