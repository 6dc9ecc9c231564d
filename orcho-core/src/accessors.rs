//! [`getters!`](crate::getters) and [`setters!`](crate::setters): the
//! methods of data types and builders that only read or only set one field,
//! declared one line each inside the type's `impl` block.
//!
//! An accessor that does more than that (computes, validates, clamps,
//! appends) is written by hand beside the others.

/// Declares methods that return one field, with the doc comments and
/// attributes given. It is written inside an `impl` block, so generic types
/// and hand-written methods share the block.
///
/// A method is written `fn name(&self) -> T;`, or
/// `fn name(&self) -> T => field;` when the method reads better under
/// another name than the field. A return type `&T` lends the field
/// (`&self.field`, so a `String` field can be returned as `&str` and a
/// `Vec<T>` as `&[T]`); any other type copies it (`self.field`).
///
/// ```
/// pub struct Step {
///     name: String,
///     attempts: u32,
///     files: Vec<String>,
/// }
///
/// impl Step {
///     orcho_core::getters! {
///         /// The step's name.
///         pub fn name(&self) -> &str;
///         /// How many times it ran.
///         pub fn attempts(&self) -> u32;
///         /// The files it touched.
///         pub fn touched(&self) -> &[String] => files;
///     }
/// }
///
/// let step = Step { name: "lint".into(), attempts: 2, files: vec!["a.rs".into()] };
/// assert_eq!((step.name(), step.attempts(), step.touched().len()), ("lint", 2, 1));
/// ```
#[macro_export]
macro_rules! getters {
    () => {};
    (
        $(#[$meta:meta])* $vis:vis fn $name:ident(&self) -> &$t:ty $(=> $field:ident)?;
        $($rest:tt)*
    ) => {
        $crate::getters!(@fn [$(#[$meta])*] $vis $name [&] $t, $name $($field)?);
        $crate::getters!($($rest)*);
    };
    (
        $(#[$meta:meta])* $vis:vis fn $name:ident(&self) -> $t:ty $(=> $field:ident)?;
        $($rest:tt)*
    ) => {
        $crate::getters!(@fn [$(#[$meta])*] $vis $name [] $t, $name $($field)?);
        $crate::getters!($($rest)*);
    };
    // The field is the method's name, unless another follows it.
    (@fn [$($meta:tt)*] $vis:vis $name:ident [$($lend:tt)?] $t:ty, $same:ident $field:ident) => {
        $crate::getters!(@fn [$($meta)*] $vis $name [$($lend)?] $t, $field);
    };
    (@fn [$($meta:tt)*] $vis:vis $name:ident [$($lend:tt)?] $t:ty, $field:ident) => {
        $($meta)*
        $vis fn $name(&self) -> $($lend)? $t {
            $($lend)? self.$field
        }
    };
}

/// Declares methods that set one field and return `self`, each
/// `#[must_use]`, with the doc comments and attributes given. It is written
/// inside an `impl` block, like [`getters!`](crate::getters).
///
/// A method is written `fn name(field: FORM);`, or
/// `fn name(param: FORM) => field;` when the parameter reads better under
/// another name. The form says how the argument becomes the field:
///
/// | form | parameter | field |
/// |---|---|---|
/// | `T` | `T` | `param` |
/// | `impl Into<T>` | `impl Into<T>` | `param.into()` |
/// | `Some(T)` | `T` | `Some(param)` |
/// | `Some(impl Into<T>)` | `impl Into<T>` | `Some(param.into())` |
///
/// ```
/// #[derive(Debug, Default)]
/// pub struct Request {
///     retries: u32,
///     label: String,
///     timeout_secs: Option<u64>,
///     reason: Option<String>,
/// }
///
/// impl Request {
///     orcho_core::setters! {
///         /// Sets how many times to retry.
///         pub fn with_retries(retries: u32);
///         /// Sets the label.
///         pub fn with_label(label: impl Into<String>);
///         /// Gives up after `secs` seconds.
///         pub fn with_timeout(secs: Some(u64)) => timeout_secs;
///         /// Says why.
///         pub fn with_reason(reason: Some(impl Into<String>));
///     }
/// }
///
/// let r = Request::default()
///     .with_retries(3)
///     .with_label("tests")
///     .with_timeout(30)
///     .with_reason("flaky network");
/// assert_eq!((r.retries, r.label.as_str(), r.timeout_secs), (3, "tests", Some(30)));
/// assert_eq!(r.reason.as_deref(), Some("flaky network"));
/// ```
#[macro_export]
macro_rules! setters {
    () => {};
    (
        $(#[$meta:meta])* $vis:vis fn $name:ident($param:ident: $($form:tt)+) => $field:ident;
        $($rest:tt)*
    ) => {
        $crate::setters!(@one [$(#[$meta])*] $vis $name $param $field [$($form)+]);
        $crate::setters!($($rest)*);
    };
    (
        $(#[$meta:meta])* $vis:vis fn $name:ident($param:ident: $($form:tt)+);
        $($rest:tt)*
    ) => {
        $crate::setters!(@one [$(#[$meta])*] $vis $name $param $param [$($form)+]);
        $crate::setters!($($rest)*);
    };
    (@one [$($meta:tt)*] $vis:vis $name:ident $param:ident $field:ident
        [Some(impl Into<$t:ty>)]
    ) => {
        $($meta)*
        #[must_use]
        $vis fn $name(mut self, $param: impl Into<$t>) -> Self {
            self.$field = Some($param.into());
            self
        }
    };
    (@one [$($meta:tt)*] $vis:vis $name:ident $param:ident $field:ident [Some($t:ty)]) => {
        $($meta)*
        #[must_use]
        $vis fn $name(mut self, $param: $t) -> Self {
            self.$field = Some($param);
            self
        }
    };
    (@one [$($meta:tt)*] $vis:vis $name:ident $param:ident $field:ident [impl Into<$t:ty>]) => {
        $($meta)*
        #[must_use]
        $vis fn $name(mut self, $param: impl Into<$t>) -> Self {
            self.$field = $param.into();
            self
        }
    };
    (@one [$($meta:tt)*] $vis:vis $name:ident $param:ident $field:ident [$t:ty]) => {
        $($meta)*
        #[must_use]
        $vis fn $name(mut self, $param: $t) -> Self {
            self.$field = $param;
            self
        }
    };
}
