//! The words a fieldless enum is spelled with in YAML, JSON and on the
//! command line, declared once with [`spelled!`](crate::spelled).

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
