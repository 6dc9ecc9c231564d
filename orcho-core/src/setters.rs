//! [`setters!`](crate::setters): the `with_*` methods of data types and
//! builders that only set a field, declared one line each.

/// Declares methods that set one field and return `self`, each
/// `#[must_use]`, with the doc comments and attributes given.
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
/// A setter that does more than that (validates, clamps, appends) is
/// written by hand beside the others.
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
/// orcho_core::setters! {
///     impl Request {
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
    (impl $ty:ty { $($items:tt)* }) => {
        impl $ty {
            $crate::setters!(@items $($items)*);
        }
    };
    (@items) => {};
    (@items
        $(#[$meta:meta])* $vis:vis fn $name:ident($param:ident: $($form:tt)+);
        $($rest:tt)*
    ) => {
        $crate::setters!(@one [$(#[$meta])*] $vis $name $param $param [$($form)+]);
        $crate::setters!(@items $($rest)*);
    };
    (@items
        $(#[$meta:meta])* $vis:vis fn $name:ident($param:ident: $($form:tt)+) => $field:ident;
        $($rest:tt)*
    ) => {
        $crate::setters!(@one [$(#[$meta])*] $vis $name $param $field [$($form)+]);
        $crate::setters!(@items $($rest)*);
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
