//! How values are spelled: the words a fieldless enum is spelled with in
//! YAML, JSON and on the command line, declared once with
//! [`spelled!`](crate::spelled), and how messages list names and show a
//! value they cannot trust.

/// A bounded, printable prefix of a value a message shows but cannot trust
/// (a hostile id, a garbled path): at most `max_chars` characters, escaped
/// as Rust escapes a string's contents, with `…` when it was cut.
///
/// ```
/// assert_eq!(orcho_core::spelling::shorten("a\nb", 10), "a\\nb");
/// assert_eq!(orcho_core::spelling::shorten("abcdef", 3), "abc…");
/// ```
pub fn shorten(value: &str, max_chars: usize) -> String {
    let mut out: String = value
        .chars()
        .take(max_chars)
        .flat_map(char::escape_debug)
        .collect();
    if value.chars().nth(max_chars).is_some() {
        out.push('…');
    }
    out
}

/// `a`, `` `a` or `b` ``, `` `a`, `b` or `c` ``: a list of spellings as
/// messages say it.
///
/// ```
/// assert_eq!(orcho_core::spelling::list(&["halt", "skip", "fix"]), "`halt`, `skip` or `fix`");
/// ```
pub fn list(spellings: &[&str]) -> String {
    match spellings {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|s| format!("`{s}`")).collect();
            format!("{} or `{last}`", init.join(", "))
        }
    }
}

/// `` `a`, `b`, `c` ``: names in backticks, separated by commas, as messages
/// list them; `none` when there are none.
///
/// ```
/// assert_eq!(orcho_core::spelling::quoted(["src/a.rs", "b.rs"]), "`src/a.rs`, `b.rs`");
/// assert_eq!(orcho_core::spelling::quoted(Vec::<String>::new()), "none");
/// ```
pub fn quoted<T: std::fmt::Display>(names: impl IntoIterator<Item = T>) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for name in names {
        let sep = if out.is_empty() { "" } else { ", " };
        let _ = write!(out, "{sep}`{name}`");
    }
    if out.is_empty() {
        out.push_str("none");
    }
    out
}

/// Declares how a fieldless enum is spelled: `ALL` (declaration order),
/// `SPELLINGS`, `as_str`, `Display`, and `from_spelling` (any ASCII case).
/// With `as "what"`, also `FromStr` whose error is a
/// [`ValueError`](crate::ValueError) listing the spellings.
///
/// The enum itself, its derives and its serde spelling stay where it is
/// declared; a test of the enum's crate should check that serde and
/// `as_str` agree.
///
/// ```
/// #[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// pub enum Light {
///     Green,
///     Red,
/// }
///
/// orcho_core::spelled!(Light as "light" {
///     Green => "green",
///     Red => "red",
/// });
///
/// assert_eq!(Light::Red.to_string(), "red");
/// assert_eq!("GREEN".parse::<Light>()?, Light::Green);
/// assert_eq!(
///     "blue".parse::<Light>().unwrap_err().to_string(),
///     "invalid light `blue`: expected `green` or `red`"
/// );
/// assert_eq!(Light::SPELLINGS, ["green", "red"]);
/// # Ok::<(), orcho_core::ValueError>(())
/// ```
#[macro_export]
macro_rules! spelled {
    ($ty:ident { $($variant:ident => $spelling:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// Every value's spelling, in the order of `ALL`.
            pub const SPELLINGS: &'static [&'static str] = &[$($spelling),+];

            /// The snake_case spelling used in YAML and JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $spelling,)+
                }
            }

            /// The value spelled `s`, in any ASCII case.
            pub fn from_spelling(s: &str) -> ::core::option::Option<Self> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str().eq_ignore_ascii_case(s))
            }
        }

        impl ::core::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
    ($ty:ident as $what:literal { $($variant:ident => $spelling:literal),+ $(,)? }) => {
        $crate::spelled!($ty { $($variant => $spelling),+ });

        impl ::core::str::FromStr for $ty {
            type Err = $crate::ValueError;

            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
                Self::from_spelling(s)
                    .ok_or_else(|| $crate::ValueError::one_of($what, s, Self::SPELLINGS))
            }
        }
    };
}
