//! Deserializing free-form maps that refuse a key given twice.
//!
//! serde refuses a struct field given twice, but a map (an `env:` block, a
//! gate's `with:` configuration) keeps the last value silently. Use these
//! with `#[serde(deserialize_with = …)]`; a repeated key fails with
//! ``duplicate field `KEY` ``, the message serde gives for a struct field,
//! so hosts locate and report both the same way.
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! #[derive(serde::Deserialize)]
//! struct Doc {
//!     #[serde(deserialize_with = "orcho_core::unique_keys::map")]
//!     env: BTreeMap<String, String>,
//! }
//!
//! let err = serde_json::from_str::<Doc>(r#"{"env": {"A": "1", "A": "2"}}"#).err().unwrap();
//! assert!(err.to_string().starts_with("duplicate field `A`"));
//! ```

use std::{collections::BTreeMap, fmt, marker::PhantomData};

use serde::{
    Deserialize, Deserializer,
    de::{self, MapAccess, SeqAccess, Visitor},
};
use serde_json::Value;

/// A map of string keys, refusing a key given twice.
///
/// # Errors
///
/// The deserializer's, or ``duplicate field `KEY` ``.
pub fn map<'de, D, V>(deserializer: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V>(PhantomData<V>);

    impl<'de, V: Deserialize<'de>> Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a mapping")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = access.next_key::<String>()? {
                if out.contains_key(&key) {
                    return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                }
                let value = access.next_value()?;
                out.insert(key, value);
            }
            Ok(out)
        }
    }

    deserializer.deserialize_map(Unique(PhantomData))
}

/// An optional JSON value whose mappings, at any depth, refuse a key given
/// twice.
///
/// # Errors
///
/// The deserializer's, or ``duplicate field `KEY` ``.
pub fn optional_value<'de, D>(deserializer: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Option::<UniqueValue>::deserialize(deserializer)?.map(|v| v.0))
}

/// A JSON value built by [`UniqueVisitor`].
struct UniqueValue(Value);

impl<'de> Deserialize<'de> for UniqueValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(UniqueValue)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(UniqueValue(v)) = access.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            let UniqueValue(value) = access.next_value()?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Gate {
        #[serde(default, deserialize_with = "optional_value")]
        with: Option<Value>,
    }

    #[test]
    fn a_repeated_key_is_refused_at_any_depth_and_values_keep_their_types() {
        let ok: Gate = serde_json::from_str(
            r#"{"with": {"a": [1, -2, 2.5, true, null, "s"], "b": {"c": 1}}}"#,
        )
        .unwrap();
        assert_eq!(
            ok.with.unwrap(),
            serde_json::json!({"a": [1, -2, 2.5, true, null, "s"], "b": {"c": 1}})
        );
        let none: Gate = serde_json::from_str("{}").unwrap();
        assert!(none.with.is_none());
        for text in [
            r#"{"with": {"a": 1, "a": 2}}"#,
            r#"{"with": {"b": {"c": 1, "c": 2}}}"#,
            r#"{"with": [{"c": 1, "c": 2}]}"#,
        ] {
            let err = serde_json::from_str::<Gate>(text).unwrap_err();
            assert!(
                err.to_string().starts_with("duplicate field"),
                "{text}: {err}"
            );
        }
    }
}
