//! The actions of decision points, and the one set type every menu uses.

use std::{fmt, hash::Hash, marker::PhantomData};

use serde::{Deserialize, Serialize};

/// An action that can be decided at some kind of decision point: a
/// closed, ordered list of snake_case spellings.
///
/// [`HandoffAction`](crate::HandoffAction),
/// [`DeliveryAction`](crate::DeliveryAction) and
/// [`IntakeAction`](crate::IntakeAction) implement it; every menu of them is
/// an [`ActionSet`].
pub trait Action: Copy + Eq + Hash + fmt::Debug + fmt::Display + Send + Sync + 'static {
    /// The kind of decision point, as named in messages: `handoff`,
    /// `delivery`, `intake`.
    const POINT: &'static str;

    /// Every action, in menu order (at most 16).
    const ALL: &'static [Self];

    /// Every action's spelling, in menu order.
    const SPELLINGS: &'static [&'static str];

    /// The snake_case spelling.
    fn as_str(self) -> &'static str;

    /// What the action does, in a few words, for a menu.
    fn description(self) -> &'static str;

    /// The action spelled `s` (any ASCII case).
    ///
    /// # Errors
    ///
    /// An [`UnknownActionError`] listing the spellings.
    fn parse(s: &str) -> Result<Self, UnknownActionError> {
        Self::ALL
            .iter()
            .copied()
            .find(|a| a.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownActionError::new(Self::POINT, s, Self::ALL))
    }
}

/// Defines an action enum: the variants with their spellings
/// ([`orcho_core::spelled!`]), [`Action`], `FromStr` and serde through the
/// spelling.
macro_rules! action_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident in $point:literal {
            $($(#[$vmeta:meta])* $variant:ident => $spelling:literal: $description:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        orcho_core::spelled!($name { $($variant => $spelling),+ });

        impl $crate::point::Action for $name {
            const POINT: &'static str = $point;
            const ALL: &'static [Self] = Self::ALL;
            const SPELLINGS: &'static [&'static str] = Self::SPELLINGS;

            fn as_str(self) -> &'static str {
                Self::as_str(self)
            }

            fn description(self) -> &'static str {
                match self {
                    $(Self::$variant => $description,)+
                }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::point::UnknownActionError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <Self as $crate::point::Action>::parse(s)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_str($crate::point::ActionVisitor::<Self>::new())
            }
        }
    };
}
pub(crate) use action_enum;

/// Deserializes an [`Action`] from its spelling; an unknown spelling is
/// serde's "unknown variant" error, raised at the value, so that a profile
/// error points at the very item and can suggest the nearest spelling.
#[doc(hidden)]
#[derive(Debug)]
pub struct ActionVisitor<A>(PhantomData<fn() -> A>);

impl<A> ActionVisitor<A> {
    #[doc(hidden)]
    pub fn new() -> Self {
        Self(PhantomData)
    }
}

impl<A> Default for ActionVisitor<A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A: Action> serde::de::Visitor<'_> for ActionVisitor<A> {
    type Value = A;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} action", A::POINT)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<A, E> {
        A::ALL
            .iter()
            .copied()
            .find(|a| a.as_str().eq_ignore_ascii_case(v))
            .ok_or_else(|| E::unknown_variant(v, A::SPELLINGS))
    }
}

/// A string is not the spelling of an action of a decision point.
///
/// ```
/// use orcho_handoff::DeliveryAction;
///
/// let err = "aprove".parse::<DeliveryAction>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown delivery action `aprove`: expected one of approve, apply, fix, skip, halt (did you mean `approve`?)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {point} action `{value}`: expected one of {expected}{}", nearest.map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default())]
pub struct UnknownActionError {
    point: &'static str,
    value: String,
    expected: String,
    nearest: Option<&'static str>,
}

impl UnknownActionError {
    #[cold]
    fn new<A: Action>(point: &'static str, value: &str, all: &[A]) -> Self {
        Self {
            point,
            value: value
                .chars()
                .take(40)
                .flat_map(char::escape_debug)
                .collect(),
            expected: all
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            nearest: orcho_core::nearest(value, all.iter().map(|a| a.as_str())),
        }
    }

    /// The spelling nearest to the refused one, when one is near.
    pub fn nearest(&self) -> Option<&'static str> {
        self.nearest
    }

    /// The refused spelling (cut to 40 characters, escaped).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The kind of decision point: `handoff`, `delivery`, `intake`.
    pub fn point(&self) -> &'static str {
        self.point
    }
}

/// The actions a decision point offers: its menu, in menu order.
///
/// Computed once, when the point opens, and persisted with it; decisions
/// are validated against this set, never against "all actions". Serialized
/// as a JSON list of spellings; displayed as `a, b, c` (`none` when empty).
///
/// ```
/// use orcho_handoff::{DeliveryAction, point::ActionSet};
///
/// let menu: ActionSet<DeliveryAction> = [DeliveryAction::Skip, DeliveryAction::Approve].into_iter().collect();
/// assert_eq!(menu.to_string(), "approve, skip");
/// assert!(menu.contains(DeliveryAction::Approve));
/// assert_eq!(serde_json::to_string(&menu)?, r#"["approve","skip"]"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub struct ActionSet<A> {
    bits: u16,
    action: PhantomData<fn() -> A>,
}

impl<A: Action> ActionSet<A> {
    /// No actions.
    pub const fn empty() -> Self {
        Self {
            bits: 0,
            action: PhantomData,
        }
    }

    /// Every action.
    pub fn all() -> Self {
        A::ALL.iter().copied().collect()
    }

    fn bit(action: A) -> u16 {
        let index = A::ALL.iter().position(|a| *a == action).unwrap_or(0);
        1 << index
    }

    /// Whether `action` is on the menu.
    pub fn contains(self, action: A) -> bool {
        self.bits & Self::bit(action) != 0
    }

    /// Whether the menu is empty.
    pub fn is_empty(self) -> bool {
        self.bits == 0
    }

    /// How many actions are on the menu.
    pub fn len(self) -> usize {
        self.bits.count_ones() as usize
    }

    /// The actions, in menu order.
    pub fn iter(self) -> impl Iterator<Item = A> {
        A::ALL.iter().copied().filter(move |a| self.contains(*a))
    }

    /// Puts `action` on the menu.
    pub fn insert(&mut self, action: A) {
        self.bits |= Self::bit(action);
    }

    /// Takes `action` off the menu.
    pub fn remove(&mut self, action: A) {
        self.bits &= !Self::bit(action);
    }

    /// The actions on both menus.
    #[must_use]
    pub fn intersection(self, other: Self) -> Self {
        Self {
            bits: self.bits & other.bits,
            action: PhantomData,
        }
    }

    /// The spellings, in menu order.
    pub fn spellings(self) -> Vec<&'static str> {
        self.iter().map(A::as_str).collect()
    }
}

impl<A> Clone for ActionSet<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for ActionSet<A> {}

impl<A> PartialEq for ActionSet<A> {
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits
    }
}

impl<A> Eq for ActionSet<A> {}

impl<A> Hash for ActionSet<A> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.bits.hash(state);
    }
}

impl<A: Action> Default for ActionSet<A> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<A: Action> FromIterator<A> for ActionSet<A> {
    fn from_iter<I: IntoIterator<Item = A>>(iter: I) -> Self {
        let mut set = Self::empty();
        for action in iter {
            set.insert(action);
        }
        set
    }
}

impl<A: Action> fmt::Display for ActionSet<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (i, action) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(action.as_str())?;
        }
        Ok(())
    }
}

impl<A: Action> fmt::Debug for ActionSet<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<A: Action + Serialize> Serialize for ActionSet<A> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, A: Action + Deserialize<'de>> Deserialize<'de> for ActionSet<A> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<A>::deserialize(deserializer)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeliveryAction, HandoffAction, IntakeAction};
    use proptest::prelude::*;

    fn spellings_round_trip<A: Action + std::str::FromStr + Serialize + for<'de> Deserialize<'de>>()
    where
        A::Err: fmt::Debug,
    {
        assert!(A::ALL.len() <= 16);
        for action in A::ALL.iter().copied() {
            assert_eq!(action.to_string().parse::<A>().unwrap(), action);
            assert_eq!(
                action.as_str().to_ascii_uppercase().parse::<A>().unwrap(),
                action
            );
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(serde_json::from_str::<A>(&json).unwrap(), action);
        }
    }

    #[test]
    fn every_action_round_trips() {
        spellings_round_trip::<HandoffAction>();
        spellings_round_trip::<DeliveryAction>();
        spellings_round_trip::<IntakeAction>();
    }

    #[test]
    fn unknown_spellings_name_the_point_and_the_choices() {
        insta::assert_snapshot!("retry".parse::<HandoffAction>().unwrap_err(), @"unknown handoff action `retry`: expected one of continue, retry_feedback, continue_with_waiver, halt");
        insta::assert_snapshot!("keep".parse::<IntakeAction>().unwrap_err(), @"unknown intake action `keep`: expected one of include, exclude, commit, halt");
        let err = serde_json::from_str::<DeliveryAction>(r#""merge""#).unwrap_err();
        insta::assert_snapshot!(err, @"unknown variant `merge`, expected one of `approve`, `apply`, `fix`, `skip`, `halt` at line 1 column 7");
    }

    proptest! {
        #[test]
        fn a_set_holds_exactly_what_was_inserted(picks in prop::collection::vec(0usize..5, 0..8)) {
            let chosen: Vec<DeliveryAction> = picks.iter().map(|i| DeliveryAction::ALL[*i]).collect();
            let set: ActionSet<DeliveryAction> = chosen.iter().copied().collect();
            for action in DeliveryAction::ALL.iter().copied() {
                prop_assert_eq!(set.contains(action), chosen.contains(&action));
            }
            let json = serde_json::to_string(&set).unwrap();
            prop_assert_eq!(serde_json::from_str::<ActionSet<DeliveryAction>>(&json).unwrap(), set);
            prop_assert_eq!(set.iter().count(), set.len());
        }
    }
}
